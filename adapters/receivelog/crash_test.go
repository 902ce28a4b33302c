package receivelog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
)

// outcome is a family of files a machine crash may leave: base followed by
// any prefix of tail.
type outcome struct{ base, tail []deadletter.Record }

func (o outcome) admits(got []deadletter.Record) bool {
	if len(got) < len(o.base) || !slices.Equal(got[:len(o.base)], o.base) {
		return false
	}
	rest := got[len(o.base):]
	return len(rest) <= len(o.tail) && slices.Equal(rest, o.tail[:len(rest)])
}

// crashModel is what the test knows of one partition: what the store
// answers now, and every outcome a crash may leave. A successful Append or
// Compact makes the outcome certain; a failed one adds its own.
type crashModel struct {
	view    []deadletter.Record
	allowed []outcome
}

func (m *crashModel) admits(got []deadletter.Record) bool {
	return slices.ContainsFunc(m.allowed, func(o outcome) bool { return o.admits(got) })
}

func (m *crashModel) settle(view []deadletter.Record) {
	m.view = slices.Clone(view)
	m.allowed = []outcome{{base: m.view}}
}

// faultHook fails, while armed, about one in three operations on the
// receive log's files and directory syncs.
type faultHook struct {
	rng   *rand.Rand
	armed bool
	fired int
}

func (h *faultHook) hook(op vfs.Op, name string) error {
	if !h.armed || (!strings.Contains(name, receivesFileName) && op != vfs.OpSyncDir) || h.rng.IntN(3) != 0 {
		return nil
	}
	h.fired++
	return vfs.ErrInjected
}

func randomBatch(rng *rand.Rand, next *int64) []deadletter.Record {
	out := make([]deadletter.Record, 1+rng.IntN(4))
	for i := range out {
		off := *next + int64(rng.IntN(3))
		switch rng.IntN(3) {
		case 0:
			out[i] = count(off, uint32(1+rng.IntN(5)))
		case 1:
			out[i] = reason(off, strings.Repeat("why", rng.IntN(40)))
		default:
			out[i] = intent(off, uint32(1+rng.IntN(5)))
		}
		*next += int64(rng.IntN(2))
	}
	return out
}

// ensure that across random sequences of appends, compactions, restarts,
// forgets and machine crashes, with injected failures of writes, syncs,
// renames, truncates and directory syncs, every crash image loads to a
// file the contract allows: everything acknowledged, plus at most a
// prefix of a failed Append, or the old or new file of a failed Compact.
func TestRandomCrashImages(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		faults := &faultHook{rng: rng}
		mem := vfs.NewMem()
		ref := refOf("orders", idA, 0)
		makePartition(t, mem, ref)
		open := func() *Store { return newStore(t, vfs.Inject(mem, faults.hook)) }
		s := open()
		m := &crashModel{}
		m.settle(nil)
		next := int64(0)
		for step := range 150 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			var err error
			var want []deadletter.Record
			certain, crashed := false, false
			switch op := rng.IntN(10); {
			case op < 5:
				recs := randomBatch(rng, &next)
				faults.armed = rng.IntN(3) == 0
				if err = s.Append(ref, recs); err == nil {
					want, certain = concat(m.view, recs), true
				} else {
					m.allowed = append(m.allowed, outcome{base: m.view, tail: recs})
				}
			case op < 7:
				live := slices.DeleteFunc(slices.Clone(m.view), func(deadletter.Record) bool { return rng.IntN(2) == 0 })
				live = append(live, randomBatch(rng, &next)[:rng.IntN(2)]...)
				faults.armed = rng.IntN(3) == 0
				if err = s.Compact(ref, live); err == nil {
					want, certain = live, true
				} else {
					m.allowed = append(m.allowed, outcome{base: live})
				}
			case op < 8: // process restart: the page cache survives
				s = open()
			case op < 9: // machine crash
				mem = mem.Crash(vfs.CrashOptions{Rand: rng})
				s, crashed = open(), true
			default:
				s.Forget(ref)
			}
			faults.armed = false
			got := mustLoad(t, s, ref)
			switch {
			case certain && !slices.Equal(got, want):
				t.Fatalf("%s: the store answers %v after a success, want %v", where, got, want)
			case !certain && !m.admits(got):
				t.Fatalf("%s (%v): the store answers %v, outside %v", where, err, got, m.allowed)
			case certain || crashed: // what is on disk now is durable
				m.settle(got)
			default:
				m.view = got
			}
			checkCrashImage(t, where, mem.Crash(vfs.CrashOptions{Rand: rng}), ref, m)
		}
		if faults.fired == 0 {
			t.Fatalf("seed %d: no fault fired", seed)
		}
	}
}

func checkCrashImage(t *testing.T, where string, img *vfs.MemFS, ref domain.PartitionRef, m *crashModel) {
	t.Helper()
	s, err := New(Options{FS: img, DataDir: dataDir})
	must(t, err)
	defer s.Close()
	if got := mustLoad(t, s, ref); !m.admits(got) {
		t.Fatalf("%s: a crash image loads %v, outside %v", where, got, m.allowed)
	}
}

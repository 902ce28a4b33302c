package schedulefile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// crashModel is what the test knows of the bucket file: the records
// acknowledged, the failed batches that may yet show up whole after them,
// and the fired ordinals that are durable, that may be, and that the open
// bucket counts as fired.
type crashModel struct {
	acked      []domain.Record
	candidates [][]domain.Record
	firedSure  map[uint32]bool // a synced fired frame names them
	firedLoose map[uint32]bool // a MarkFired named them, success or not, not synced since
	firedMem   map[uint32]bool // the open bucket's fired set
	entries    map[uint32]Entry
}

func newCrashModel() *crashModel {
	return &crashModel{firedSure: map[uint32]bool{}, firedLoose: map[uint32]bool{}, firedMem: map[uint32]bool{}, entries: map[uint32]Entry{}}
}

// admits checks what an Open answered: the acknowledged records, plus at
// most one failed batch whole, each read back exactly; every durable fired
// ordinal hidden; no ordinal hidden that no MarkFired named. It returns
// the records the file holds.
func (m *crashModel) admits(b *Bucket, entries []Entry) ([]domain.Record, error) {
	var errs []error
	for _, extra := range append([][]domain.Record{nil}, m.candidates...) {
		all := append(append([]domain.Record(nil), m.acked...), extra...)
		if b.Records() != len(all) {
			continue
		}
		err := m.check(b, entries, all)
		if err == nil {
			return all, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%d records, %d acknowledged, %d failed batches: %w", b.Records(), len(m.acked), len(m.candidates), errors.Join(errs...))
}

func (m *crashModel) check(b *Bucket, entries []Entry, all []domain.Record) error {
	shown := map[uint32]bool{}
	for i, e := range entries {
		if i > 0 && e.Ordinal <= entries[i-1].Ordinal {
			return fmt.Errorf("entries out of order: %v", ordinalsOf(entries))
		}
		if int(e.Ordinal) >= len(all) {
			return fmt.Errorf("entry %d past %d records", e.Ordinal, len(all))
		}
		got, err := b.Read(e)
		if err != nil || !sameRecord(got, all[e.Ordinal]) {
			return fmt.Errorf("record %d reads %+v (%v), want %+v", e.Ordinal, got, err, all[e.Ordinal])
		}
		shown[e.Ordinal] = true
	}
	for o := range uint32(len(all)) {
		switch {
		case shown[o] && m.firedSure[o]:
			return fmt.Errorf("record %d came back after a durable fired frame", o)
		case !shown[o] && !m.firedSure[o] && !m.firedLoose[o]:
			return fmt.Errorf("record %d vanished, never fired", o)
		}
	}
	return nil
}

// adopt takes what a successful Open answered as the new certainty: Open
// fdatasyncs, so all of it is durable.
func (m *crashModel) adopt(all []domain.Record, entries []Entry) {
	m.acked, m.candidates = all, nil
	m.firedSure, m.firedLoose, m.firedMem, m.entries = map[uint32]bool{}, map[uint32]bool{}, map[uint32]bool{}, map[uint32]Entry{}
	for o := range uint32(len(all)) {
		m.firedSure[o], m.firedMem[o] = true, true
	}
	for _, e := range entries {
		delete(m.firedSure, e.Ordinal)
		delete(m.firedMem, e.Ordinal)
		m.entries[e.Ordinal] = e
	}
}

// armRandom arms one fault on a bucket file or directory operation.
func armRandom(rng *rand.Rand, f *vfs.Faults) {
	ops := []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpSync, vfs.OpTruncate, vfs.OpSyncDir, vfs.OpRead}
	op := ops[rng.IntN(len(ops))]
	name := ".bucket"
	if op == vfs.OpSyncDir {
		name = partDir
	}
	f.FailNth(op, name, rng.IntN(2))
}

func randomBatch(rng *rand.Rand) []domain.Record {
	out := make([]domain.Record, 1+rng.IntN(4))
	for i := range out {
		out[i] = domain.Record{DeliverAtMs: 1 + rng.Int64N(1<<40), Payload: []byte(strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(200)))}
		switch rng.IntN(3) {
		case 0:
			out[i].Key = []byte(fmt.Sprintf("key-%d", rng.IntN(1000)))
		case 1:
			out[i].Key = []byte{}
		}
	}
	return out
}

// ensure that across random appends, fired marks, reads, process restarts
// and machine crashes (unsynced bytes lost or torn), with injected
// failures of writes, syncs, truncates, reads and directory syncs, every
// acknowledged record survives with its exact bytes, a failed Append is
// never seen in part, a durable fired mark never comes undone, and a lost
// one only brings its records back: no unfired record ever disappears.
// Every step also checks a crash image of the moment.
func TestRandomCrashImages(t *testing.T) {
	t.Parallel()
	injected := 0
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		mem := newMem(t)
		faults := &vfs.Faults{}
		fsys := func() vfs.FS {
			return vfs.Inject(mem, func(op vfs.Op, name string) error { return faults.Hook(op, name) })
		}
		m := newCrashModel()
		// settle ends a step's faults once its bucket call returned, so that
		// the checks after it run clean.
		settle := func() {
			injected += faults.Fired()
			faults = &vfs.Faults{}
		}
		var b *Bucket
		reopen := func(where string) {
			if b != nil {
				_ = b.Close()
			}
			for attempt := 0; ; attempt++ {
				faults = &vfs.Faults{}
				if attempt == 0 && rng.IntN(3) == 0 {
					armRandom(rng, faults)
				}
				var entries []Entry
				var err error
				b, entries, err = Open(fsys(), bucketPath, true)
				fired := faults.Fired()
				settle()
				if err != nil && attempt == 0 && fired > 0 {
					continue // retried without faults
				}
				if err != nil {
					t.Fatalf("%s: open: %v", where, err)
				}
				all, err := m.admits(b, entries)
				if err != nil {
					t.Fatalf("%s: open answers outside the model: %v", where, err)
				}
				m.adopt(all, entries)
				return
			}
		}
		reopen(fmt.Sprintf("seed %d: first open", seed))
		var retry []domain.Record
		for step := range 150 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			faults = &vfs.Faults{}
			if rng.IntN(3) == 0 {
				armRandom(rng, faults)
			}
			switch op := rng.IntN(12); {
			case op < 5:
				recs := retry
				if recs == nil {
					recs = randomBatch(rng)
				}
				entries, err := b.Append(recs)
				settle()
				if err != nil {
					m.candidates = append(m.candidates, recs)
					if rng.IntN(2) == 0 {
						retry = recs // the caller retries the same records
					}
					break
				}
				retry = nil
				first := uint32(len(m.acked))
				if err := checkEntries(b, entries, numbered(first, recs...)); err != nil {
					t.Fatalf("%s: appended: %v", where, err)
				}
				for _, e := range entries {
					m.entries[e.Ordinal] = e
				}
				m.acked, m.candidates = append(m.acked, recs...), nil
				maps.Copy(m.firedSure, m.firedMem) // the fdatasync took the fired frames along
			case op < 8:
				var ordinals []uint32
				for range rng.IntN(4) {
					if len(m.acked) > 0 {
						ordinals = append(ordinals, uint32(rng.IntN(len(m.acked))))
					}
				}
				err := b.MarkFired(ordinals)
				settle()
				for _, o := range ordinals {
					m.firedLoose[o] = true
					if err == nil {
						m.firedMem[o] = true
					}
				}
				if err == nil && len(ordinals) > 0 {
					m.candidates = nil // its write came after a cut of any failed batch
				}
			case op < 9:
				for o, e := range m.entries {
					got, err := b.Read(e)
					settle()
					if err == nil && !sameRecord(got, m.acked[o]) {
						t.Fatalf("%s: read %d: %+v, want %+v", where, o, got, m.acked[o])
					}
					if err != nil && !errors.Is(err, vfs.ErrInjected) {
						t.Fatalf("%s: read %d: %v", where, o, err)
					}
					break
				}
			case op < 10: // process restart: the page cache survives
				reopen(where + " (restart)")
			default: // machine crash
				mem = mem.Crash(vfs.CrashOptions{Rand: rng})
				reopen(where + " (crash)")
			}
			settle()
			if b.Records() != len(m.acked) || b.Pending() != len(m.acked)-len(m.firedMem) {
				t.Fatalf("%s: %d records, %d pending; want %d and %d", where, b.Records(), b.Pending(), len(m.acked), len(m.acked)-len(m.firedMem))
			}
			checkCrashImage(t, where, mem.Crash(vfs.CrashOptions{Rand: rng}), m)
		}
		_ = b.Close()
	}
	if injected == 0 {
		t.Fatal("no fault fired")
	}
}

// checkCrashImage opens what a machine crash would leave now and checks it
// against the model. A missing file reads as empty.
func checkCrashImage(t *testing.T, where string, img *vfs.MemFS, m *crashModel) {
	t.Helper()
	b, entries, err := Open(img, bucketPath, false)
	if errors.Is(err, fs.ErrNotExist) {
		if len(m.acked) > 0 {
			t.Fatalf("%s: a crash image lost the file of %d acknowledged records", where, len(m.acked))
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: open a crash image: %v", where, err)
	}
	defer b.Close()
	if _, err := m.admits(b, entries); err != nil {
		t.Fatalf("%s: a crash image: %v", where, err)
	}
}

package offsetstore

import (
	"math/rand/v2"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ackModel is one partition's true consumer state: offsets acked in random
// order, the frontier the contiguous prefix.
type ackModel struct {
	acked     map[int64]bool
	committed int64
}

func (m *ackModel) ack(o int64) {
	m.acked[o] = true
	for m.acked[m.committed+1] {
		m.committed++
	}
}

func (m *ackModel) snapshot() ports.ConsumerOffsets {
	out := ports.ConsumerOffsets{Committed: m.committed}
	for o := range m.acked {
		if o > m.committed {
			out.AckedAhead = append(out.AckedAhead, o)
		}
	}
	return out
}

// ensure that across random sequences of acks, writes, syncs, levels,
// process restarts and machine crashes (with torn unsynced data), no crash
// image recovers a frontier past an ack or an acked-ahead offset never
// acked, and none loses what was synced.
func TestRandomCrashImages(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		mem := vfs.NewMem()
		ref := refOf("orders", idA, 0)
		makePartition(t, mem, ref)
		s := newStore(t, mem)
		m := &ackModel{acked: map[int64]bool{}, committed: -1}
		var written, durable int64 = -1, -1 // frontier of the newest Write and of the newest durable record
		primed, wroteHere := false, false   // this process primed; wrote since it started
		prime := func() {
			if !primed {
				durable, primed = max(durable, written), true // priming syncs what the page cache holds
			}
		}
		next := int64(0)
		for step := 0; step < 300; step++ {
			switch op := rng.IntN(10); {
			case op < 5: // ack one of the next few offsets
				m.ack(next + int64(rng.IntN(4)))
				if rng.IntN(3) == 0 {
					next++
				}
			case op < 7:
				prime()
				must(t, s.Write(ref, m.snapshot()))
				written, wroteHere = m.committed, true
			case op < 8:
				must(t, s.Sync(ref))
				if wroteHere {
					durable = max(durable, written)
				}
			case op < 9:
				prime()
				must(t, s.Level(ref, written))
				durable = max(durable, written)
			default: // process restart: the page cache survives
				s = newStore(t, mem)
				primed, wroteHere = false, false
			}
			checkImage(t, seed, step, mem.Crash(vfs.CrashOptions{Rand: rng}), ref, m, durable)
			checkImage(t, seed, step, mem, ref, m, written)
		}
	}
}

func checkImage(t *testing.T, seed uint64, step int, fsys vfs.FS, ref domain.PartitionRef, m *ackModel, floor int64) {
	t.Helper()
	s, err := New(Options{FS: fsys, DataDir: dataDir})
	must(t, err)
	defer s.Close()
	got := mustLoad(t, s, ref)
	if got.Committed > m.committed {
		t.Fatalf("seed %d step %d: recovered frontier %d past the acked %d", seed, step, got.Committed, m.committed)
	}
	if got.Committed < floor {
		t.Fatalf("seed %d step %d: recovered frontier %d below the persisted %d", seed, step, got.Committed, floor)
	}
	for _, o := range got.AckedAhead {
		if !m.acked[o] {
			t.Fatalf("seed %d step %d: offset %d recovered as acked but never acked", seed, step, o)
		}
	}
}

package segmentlog

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

func evictOptions(mem *vfs.MemFS, clock *fakeClock) Options {
	opts := testOptions(mem, clock)
	opts.IdleEviction = time.Minute
	return opts
}

// ensure that idle eviction closes a log (writing its exact boundary), that
// a peek answers from the hwm file without reopening it, and that the next
// read reopens it lazily with the same records.
func TestIdleEvictionClosesAndReopensLazily(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	recs := batch(1, 5)
	mustCommit(t, s, ref, recs)
	clock.Advance(30 * time.Second)
	s.evictOnce()
	if st := s.Stats(); st.OpenLogs != 1 {
		t.Fatalf("a log used 30s ago was evicted: %+v", st)
	}
	clock.Advance(time.Minute)
	s.evictOnce()
	if st := s.Stats(); st.OpenLogs != 0 || st.LogsEvicted != 1 {
		t.Fatalf("after the idle period: %+v, want no open log and one eviction", st)
	}
	if b, err := s.Bounds(ref); err != nil || b.HighWatermark != 5 || s.Stats().OpenLogs != 0 {
		t.Fatalf("peek = %+v, %v, open logs %d: want 5 from the hwm file, nothing opened", b, err, s.Stats().OpenLogs)
	}
	checkRange(t, s, ref, 0, recs)
	if s.Stats().OpenLogs != 1 {
		t.Fatal("the read did not reopen the log")
	}
	if first := mustCommit(t, s, ref, batch(2, 1)); first != 5 {
		t.Fatalf("commit after reopen at %d, want 5", first)
	}
}

// ensure that only real gets stamp use: Bounds and Changed do not keep a
// log open, a Read does.
func TestOnlyRealGetsStampUse(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	a, b := testRef(0), testRef(1)
	mustCommit(t, s, a, batch(1, 1))
	mustCommit(t, s, b, batch(2, 1))
	clock.Advance(2 * time.Minute)
	if _, err := s.Bounds(a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changed(a); err != nil {
		t.Fatal(err)
	}
	checkRange(t, s, b, 0, batch(2, 1))
	s.evictOnce()
	if s.slotFor(a).log.Load() != nil {
		t.Fatal("a log only peeked at was kept open")
	}
	if s.slotFor(b).log.Load() == nil {
		t.Fatal("a log just read was evicted")
	}
}

// ensure that a log whose retention owes a sweep is not evicted (the reaper
// sees only open logs).
func TestEvictionWaitsForRetention(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	mustCommit(t, s, ref, batch(1, 1))
	clock.Advance(2 * time.Hour)
	s.evictOnce()
	if s.Stats().OpenLogs != 1 {
		t.Fatal("a log owing retention was evicted")
	}
	s.reapOnce()
	s.evictOnce()
	if s.Stats().OpenLogs != 0 {
		t.Fatal("the swept log was not evicted")
	}
}

// ensure that commits and reads racing evictions on every scan lose nothing
// (dense offsets, every record once), that commits never fail, and that a
// read racing a close answers only ErrLogClosed, never a gap (F17, F35).
func TestProduceReadEvictHammer(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	const partitions, commits = 3, 40
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			clock.Advance(2 * time.Minute)
			s.evictOnce()
		}
	})
	want := make([][]domain.Record, partitions)
	var writers sync.WaitGroup
	for p := range partitions {
		ref := testRef(int32(p))
		writers.Go(func() {
			for c := range commits {
				recs := batch(p*1000+c, 1+c%3)
				first, err := s.CommitDurable(context.Background(), ref, recs)
				if err != nil || first != int64(len(want[p])) {
					t.Errorf("partition %d commit %d at %d, %v; want %d", p, c, first, err, len(want[p]))
					return
				}
				want[p] = append(want[p], recs...)
			}
		})
		wg.Go(func() { hammerRead(t, s, ref, &done) })
	}
	writers.Wait()
	pollUntil(t, "an eviction during the hammer", func() bool { return s.Stats().LogsEvicted > 0 })
	done.Store(true)
	wg.Wait()
	for p := range partitions {
		checkExactly(t, s, testRef(int32(p)), want[p])
	}
}

func hammerRead(t *testing.T, s *Store, ref domain.PartitionRef, done *atomic.Bool) {
	for !done.Load() {
		got, err := s.Read(context.Background(), ref, 0, 1000, 0)
		switch {
		case err == nil:
			for i, r := range got {
				if r.Offset != int64(i) {
					t.Errorf("read served offset %d at position %d", r.Offset, i)
					return
				}
			}
		case errors.Is(err, domain.ErrOffsetNotWritten), errors.Is(err, domain.ErrLogClosed):
		default:
			t.Errorf("read racing eviction: %v", err)
			return
		}
	}
}

package segmentlog

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

func segmentBases(t *testing.T, fsys vfs.FS, ref domain.PartitionRef) []int64 {
	t.Helper()
	bases, err := listSegments(fsys, partDir(ref))
	if err != nil {
		t.Fatal(err)
	}
	return bases
}

// ensure that a sweep deletes the sealed segments last written before the
// retention, keeps younger ones and the active one, and that reads below the
// new oldest offset answer ErrOffsetGone.
func TestRetentionDeletesExpiredSealedSegments(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	opts := testOptions(mem, clock)
	opts.SegmentMaxBytes = 400
	s := mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	for i := range 6 {
		mustCommit(t, s, ref, batch(i, 10)) // each commit fills and rolls a segment
	}
	old := segmentBases(t, mem, ref)
	clock.Advance(40 * time.Minute)
	var young []domain.Record
	for i := range 3 {
		recs := batch(10+i, 10)
		mustCommit(t, s, ref, recs)
		young = append(young, recs...)
	}
	hwm := hwmBounds(t, s, ref)
	clock.Advance(30 * time.Minute) // the first six segments are now 70 min old, the rest 30
	s.reapOnce()
	bases := segmentBases(t, mem, ref)
	if bases[0] != 60 {
		t.Fatalf("segments after the sweep start at %d (%v), want 60", bases[0], bases)
	}
	if len(old) < 6 || bases[len(bases)-1] != hwm {
		t.Fatalf("before %v, after %v: the active segment (base %d) must remain", old, bases, hwm)
	}
	wantErr(t, readErr(s, ref, 59), domain.ErrOffsetGone, "read below the oldest retained offset")
	checkRange(t, s, ref, 60, young)
	if b, _ := s.Bounds(ref); b.Oldest != 60 || b.HighWatermark != hwm {
		t.Fatalf("Bounds = %+v, want [60, %d)", b, hwm)
	}
	if st := s.Stats(); st.SegmentsDeleted != 6 || st.MessagesDeleted != 60 {
		t.Fatalf("stats %+v, want 6 segments and 60 messages deleted", st)
	}
}

// ensure that a trickle partition that never fills a segment still expires:
// the write path rolls a segment whose oldest record is older than the roll
// age, and the reaper seals and deletes an idle, fully committed active
// segment (F34: life bounded by about twice the retention).
func TestRetentionOnTricklePartition(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, testOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	mustCommit(t, s, ref, batch(1, 1))
	clock.Advance(61 * time.Minute)
	mustCommit(t, s, ref, batch(2, 1)) // rolls first: the active segment's oldest record is past the roll age
	if bases := segmentBases(t, mem, ref); len(bases) != 2 || bases[1] != 1 {
		t.Fatalf("segments %v, want a roll before the second record", bases)
	}
	s.reapOnce() // segment 0 was last written 61 min ago
	wantErr(t, readErr(s, ref, 0), domain.ErrOffsetGone, "read of the first trickle record")
	checkRange(t, s, ref, 1, batch(2, 1))
	clock.Advance(59 * time.Minute)
	s.reapOnce() // the active segment is 59 min idle: not yet
	checkRange(t, s, ref, 1, batch(2, 1))
	clock.Advance(2 * time.Minute)
	s.reapOnce() // idle rotation: sealed and deleted in one sweep
	wantErr(t, readErr(s, ref, 1), domain.ErrOffsetGone, "read after idle rotation")
	if b, _ := s.Bounds(ref); b != (ports.LogBounds{Oldest: 2, HighWatermark: 2}) {
		t.Fatalf("Bounds = %+v, want [2, 2)", b)
	}
	if first := mustCommit(t, s, ref, batch(3, 1)); first != 2 {
		t.Fatalf("commit after expiry at %d, want 2", first)
	}
}

// ensure that an active segment holding records above the high watermark
// (a hidden tail) is never rotated away, so a failed commit's truncation can
// always find them (4.8).
func TestRetentionSparesActiveSegmentWithHiddenTail(t *testing.T) {
	r := newFaultRig(0)
	clock := newFakeClock()
	r.opts.Now = clock.Now
	s := mustOpen(t, r.opts)
	ref := testRef(0)
	mustCommit(t, s, ref, batch(1, 3))
	r.faults.FailNext(vfs.OpSync, ".log")
	r.faults.FailNext(vfs.OpTruncate, ".log")
	_, _ = s.CommitDurable(context.Background(), ref, batch(2, 2))
	s = r.reopen(t, s)
	defer func() { _ = s.Close() }()
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	hwmBounds(t, s, ref) // open the log
	clock.Advance(3 * time.Hour)
	s.reapOnce()
	checkRange(t, s, ref, 0, batch(1, 3))
	if bases := segmentBases(t, r.mem, ref); len(bases) != 1 {
		t.Fatalf("segments %v: the active segment with a hidden tail was rotated", bases)
	}
}

// ensure that a panicking sweep is recovered, counted and skipped, and that
// the reaper goroutine itself sweeps on its interval.
func TestReaperSurvivesPanicAndRunsOnItsOwn(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	opts := testOptions(mem, clock)
	panics := true
	opts.hooks = &testHooks{sweep: func(string) {
		if panics {
			panic("sweep exploded")
		}
	}}
	s := mustOpen(t, opts)
	ref := testRef(0)
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	mustCommit(t, s, ref, batch(1, 2))
	clock.Advance(2 * time.Hour)
	s.reapOnce()
	if st := s.Stats(); st.ReaperPanics != 1 {
		t.Fatalf("ReaperPanics = %d, want 1", st.ReaperPanics)
	}
	checkRange(t, s, ref, 0, batch(1, 2))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	panics = false
	opts.ReapInterval = 10 * time.Millisecond
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	s.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	hwmBounds(t, s, ref)
	pollUntil(t, "the reaper goroutine expiring the segment", func() bool {
		return readErr(s, ref, 0) != nil
	})
	wantErr(t, readErr(s, ref, 0), domain.ErrOffsetGone, "read after the reaper ran")
}

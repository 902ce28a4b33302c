package segmentlog

import (
	"context"
	"runtime"
	"testing"

	"github.com/narad/narad/adapters/vfs"
)

// ensure that records appended outside CommitDurable become visible only
// after the flusher's fsync and read-back, within its age and sync bounds,
// and that the flusher then holds no timer.
func TestAppendBecomesVisibleAfterTheFlusher(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	recs := batch(1, 3)
	first, err := s.Append(context.Background(), ref, recs)
	if err != nil || first != 0 {
		t.Fatalf("Append = %d, %v", first, err)
	}
	if b, _ := s.Bounds(ref); b.HighWatermark != 0 {
		t.Fatalf("appended records visible before any flush: %+v", b)
	}
	pollUntil(t, "the flusher making the append visible", func() bool {
		b, _ := s.Bounds(ref)
		return b.HighWatermark == 3
	})
	checkRange(t, s, ref, 0, recs)
	l := s.slotFor(ref).log.Load()
	pollUntil(t, "the idle flusher disarming its timer", func() bool { return !l.fl.armed.Load() })
}

// ensure that a commit drains earlier appends too, and Sync makes appends
// visible at once.
func TestCommitAndSyncDrainAppends(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	a, b, c := batch(1, 2), batch(2, 3), batch(3, 1)
	if _, err := s.Append(context.Background(), ref, a); err != nil {
		t.Fatal(err)
	}
	if first := mustCommit(t, s, ref, b); first != 2 {
		t.Fatalf("commit after two appends at %d, want 2", first)
	}
	checkExactly(t, s, ref, append(a, b...))
	if _, err := s.Append(context.Background(), ref, c); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ref); err != nil {
		t.Fatal(err)
	}
	checkExactly(t, s, ref, append(append(a, b...), c...))
}

// ensure that a clean close flushes what was appended and writes the exact
// boundary.
func TestCloseFlushesAppends(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	s := mustOpen(t, opts)
	ref := testRef(0)
	if _, err := s.Append(context.Background(), ref, batch(1, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	if b, err := s.Bounds(ref); err != nil || b.HighWatermark != 4 {
		t.Fatalf("peek after close = %+v, %v; want the exact boundary 4", b, err)
	}
	checkExactly(t, s, ref, batch(1, 4))
}

// ensure that open, quiet logs hold no goroutine: a node with thousands of
// idle partitions must not pay a parked flusher for each (idle cost).
func TestIdleOpenLogsHoldNoGoroutine(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = s.Close() }()
	base := runtime.NumGoroutine()
	const logs = 50
	for p := range int32(logs) {
		if _, err := s.Append(context.Background(), testRef(p), batch(1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	pollUntil(t, "every append visible and every flusher gone", func() bool {
		for p := range int32(logs) {
			if b, _ := s.Bounds(testRef(p)); b.HighWatermark != 1 {
				return false
			}
		}
		return runtime.NumGoroutine() <= base+2
	})
	for p := range int32(logs) {
		if s.slotFor(testRef(p)).log.Load().fl.armed.Load() {
			t.Fatalf("partition %d keeps a timer armed while idle", p)
		}
	}
}

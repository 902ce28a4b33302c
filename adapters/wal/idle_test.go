package wal

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
)

// ensure that a lone append commits on the appender's own goroutine: on a
// quiet node the sync loop is not woken for it (no hand-off to the loop
// and back), and the record is durable when Append returns.
func TestLoneAppendCommitsWithoutTheLoop(t *testing.T) {
	w := openMem(t, vfs.NewMem(), Options{SyncInterval: time.Millisecond})
	// An observation window of twenty backstop intervals before the
	// appends (not a synchronization): a loop whose backstop was armed at
	// open has woken by now, however quickly the appends follow.
	time.Sleep(20 * time.Millisecond)
	mustAppendN(t, w, 3, 16)
	if got := w.DurableNext(); got != 3 {
		t.Fatalf("DurableNext after three appends = %d, want 3", got)
	}
	if wakes := w.loopWakes.Load(); wakes != 0 {
		t.Fatalf("the sync loop woke %d times for three sequential appends, want 0", wakes)
	}
}

// ensure that an idle WAL's sync loop sleeps on the poke alone: the
// backstop runs only while batches keep arriving, so a node that takes no
// produce pays no wake-ups for it. A record staged while another commit is
// in flight pokes the loop, which commits it once that commit ends.
func TestIdleSyncLoopDoesNotWake(t *testing.T) {
	gate := newSyncGate(vfs.OpSync)
	w := openMem(t, vfs.Inject(vfs.NewMem(), gate.hook), Options{SyncInterval: time.Millisecond})
	gate.armed.Store(true)
	first := appendAsync(context.Background(), w, testRecord(0, 16))
	<-gate.entered
	second := appendAsync(context.Background(), w, testRecord(1, 16))
	pollUntil(t, "the second record poked the loop", func() bool { return w.loopWakes.Load() >= 1 })
	close(gate.release)
	for _, ch := range []<-chan appendResult{first, second} {
		if r := <-ch; r.err != nil {
			t.Fatalf("append: %v", r.err)
		}
	}
	pollUntil(t, "the loop's wake after the last batch", func() bool { return w.loopWakes.Load() >= 2 })
	settled := w.loopWakes.Load()
	// An observation window of fifty backstop intervals (not a
	// synchronization): a loop that kept its backstop wakes ~50 times.
	time.Sleep(50 * time.Millisecond)
	if extra := w.loopWakes.Load() - settled; extra > 2 {
		t.Fatalf("the idle sync loop woke %d times in 50 backstop intervals", extra)
	}
	mustAppendN(t, w, 1, 16) // and a new record still commits at once
}

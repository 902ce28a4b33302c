package wal

import (
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
)

// ensure that an idle WAL's sync loop sleeps on the poke alone: the
// backstop runs only while batches keep arriving, so a node that takes no
// produce pays no wake-ups for it (every staged record pokes, so nothing
// waits on the backstop).
func TestIdleSyncLoopDoesNotWake(t *testing.T) {
	w := openMem(t, vfs.NewMem(), Options{SyncInterval: time.Millisecond})
	mustAppendN(t, w, 3, 16)
	pollUntil(t, "the loop's wake after the last batch", func() bool { return w.loopWakes.Load() >= 3 })
	settled := w.loopWakes.Load()
	// An observation window of fifty backstop intervals (not a
	// synchronization): a loop that kept its backstop wakes ~50 times.
	time.Sleep(50 * time.Millisecond)
	if extra := w.loopWakes.Load() - settled; extra > 2 {
		t.Fatalf("the idle sync loop woke %d times in 50 backstop intervals", extra)
	}
	mustAppendN(t, w, 1, 16) // and a new record still commits at once
}

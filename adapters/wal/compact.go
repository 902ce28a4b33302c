package wal

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Checkpoint is the first sequence not yet committed, as last stored.
func (w *WAL) Checkpoint() uint64 { return w.cp.value() }

// StoreCheckpoint records seq as the first uncommitted sequence: its 8 bytes
// are overwritten in place at once (a process crash keeps them) and the
// background flusher fdatasyncs them within the flush interval, then
// compacts. seq must not exceed DurableNext (ErrCheckpointBeyondDurable) nor
// go below the stored value (ErrCheckpointBackwards).
func (w *WAL) StoreCheckpoint(seq uint64) error {
	w.mu.Lock()
	closed, durable := w.closed, w.durableNext
	w.mu.Unlock()
	if closed {
		return w.errClosed("store checkpoint")
	}
	if seq > durable {
		return fmt.Errorf("wal: store checkpoint %d, durable next %d: %w", seq, durable, ErrCheckpointBeyondDurable)
	}
	if err := w.cp.store(seq); err != nil {
		return fmt.Errorf("wal: %w", err)
	}
	return nil
}

// FlushCheckpoint makes the stored checkpoint durable now and compacts below
// it, as the background flusher does within the flush interval.
func (w *WAL) FlushCheckpoint() error {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return w.errClosed("flush checkpoint")
	}
	durable, err := w.cp.flush()
	if err != nil {
		return fmt.Errorf("wal: flush checkpoint: %w", err)
	}
	return w.compactBefore(durable)
}

// checkpointFlusher waits for a store, lets further stores gather for up to
// the flush interval, then flushes once and compacts. No timer runs while no
// store is owed. At Close the caller flushes a last time.
func (w *WAL) checkpointFlusher() {
	defer close(w.flusherDone)
	for {
		select {
		case <-w.cp.poke:
		case <-w.stopFlusher:
			return
		}
		t := time.NewTimer(w.opts.CheckpointFlushInterval)
		select {
		case <-t.C:
		case <-w.stopFlusher:
			t.Stop()
			return
		}
		// A failure stays in the checkpoint (and in Close's error); the data
		// is kept, compaction just does not advance.
		_ = w.FlushCheckpoint()
	}
}

// compactBefore reclaims what lies below the durable checkpoint cp (spec
// 2.9): (1) when every record is below cp and the active segment holds at
// least 1 MiB, it rolls to an empty segment based at the next sequence;
// (2) it deletes each non-active segment whose successor's base <= cp, oldest
// first, fsyncing the directory after each delete so a crash never leaves a
// gap. The last segment is always kept.
func (w *WAL) compactBefore(cp uint64) error {
	w.compactMu.Lock()
	defer w.compactMu.Unlock()
	if err := w.rollIfReclaimable(cp); err != nil {
		return err
	}
	for {
		seg, ok := w.deletableSegment(cp)
		if !ok {
			return nil
		}
		if err := w.deleteSegment(seg); err != nil {
			return err
		}
	}
}

// rollIfReclaimable stages a roll-only batch when every record is below cp
// and the active segment reached the rotate floor, and waits for it.
func (w *WAL) rollIfReclaimable(cp uint64) error {
	w.mu.Lock()
	if w.closed || w.failErr != nil || w.nextSeq != cp || w.stageSegSize < rotateFloorBytes {
		w.mu.Unlock()
		return nil
	}
	st := w.cur
	st.rolls = append(st.rolls, rollMark{at: len(st.buf), base: w.nextSeq})
	st.endSeq = w.nextSeq
	w.stageSegSize = 0
	if st.batch == nil {
		st.batch = &batch{done: make(chan struct{})}
	}
	b := st.batch
	w.mu.Unlock()
	if err := w.commitOrAwait(b); err != nil {
		return fmt.Errorf("wal: compaction roll at %d: %w", cp, err)
	}
	return nil
}

// deletableSegment returns the oldest segment whose successor's base <= cp.
func (w *WAL) deletableSegment(cp uint64) (*segment, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.segments) < 2 || w.segments[1].base > cp {
		return nil, false
	}
	return w.segments[0], true
}

// deleteSegment removes seg's file and drops it from the list, then makes
// the removal durable before the next segment may go.
func (w *WAL) deleteSegment(seg *segment) error {
	seg.deleted.Store(true)
	w.dropCachedRead(seg)
	if err := w.opts.FS.Remove(seg.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("wal: compaction: remove %s: %w", seg.path, err)
	}
	w.mu.Lock()
	if len(w.segments) > 0 && w.segments[0] == seg {
		w.segments = w.segments[1:]
	}
	w.mu.Unlock()
	if err := w.opts.FS.SyncDir(w.opts.Dir); err != nil {
		return fmt.Errorf("wal: compaction: sync directory after removing %s: %w", seg.path, err)
	}
	return nil
}

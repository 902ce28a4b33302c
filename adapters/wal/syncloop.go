package wal

import (
	"fmt"
	"time"

	"github.com/narad/narad/domain"
)

// syncLoop is the single group-commit goroutine: on a poke or the backstop
// it detaches the filling buffer and writes and fsyncs it once. At Close it
// completes whatever was staged before the WAL closed, then exits.
func (w *WAL) syncLoop() {
	defer close(w.loopDone)
	t := time.NewTimer(w.opts.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-w.poke:
		case <-t.C:
		case <-w.stopLoop:
			w.commitStaged()
			return
		}
		w.commitStaged()
		t.Reset(w.opts.SyncInterval)
	}
}

// commitStaged detaches the filling buffer (appenders go on staging into the
// other one), writes and fsyncs it without holding mu, then completes its
// batch. A latched WAL writes nothing and fails the batch.
func (w *WAL) commitStaged() {
	w.mu.Lock()
	st := w.cur
	if st.batch == nil {
		w.mu.Unlock()
		return
	}
	w.cur, w.spare = w.spare, nil
	err := w.failErr
	w.mu.Unlock()

	if err == nil {
		if werr := w.writeStage(st); werr != nil {
			err = w.latch(werr)
		}
	}
	b := st.batch
	st.reset()
	w.mu.Lock()
	w.spare = st
	w.mu.Unlock()
	b.err = err
	close(b.done)
}

// latch records the first disk failure; every later append fails with it.
func (w *WAL) latch(cause error) error {
	err := fmt.Errorf("wal: %s: %w: %w", w.opts.Dir, domain.ErrWALFailed, cause)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failErr == nil {
		w.failErr = err
		w.failed.Store(true)
	}
	return w.failErr
}

// writeStage writes the detached buffer piece by piece: the frames before
// each roll are written and synced into the old segment, then the roll, then
// the rest. The durable frontier moves after each synced piece.
func (w *WAL) writeStage(st *stage) error {
	start := 0
	for _, r := range st.rolls {
		if err := w.writePiece(st.buf[start:r.at], r.base); err != nil {
			return err
		}
		if err := w.roll(r.base); err != nil {
			return err
		}
		start = r.at
	}
	return w.writePiece(st.buf[start:], st.endSeq)
}

// writePiece appends p to the active segment, fsyncs once and makes every
// sequence below endSeq durable.
func (w *WAL) writePiece(p []byte, endSeq uint64) error {
	if len(p) == 0 {
		return nil
	}
	if _, err := w.active.WriteAt(p, w.activeSize); err != nil {
		return fmt.Errorf("write %d bytes at %d of %s: %w", len(p), w.activeSize, w.active.Name(), err)
	}
	w.activeSize += int64(len(p))
	if err := w.active.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.active.Name(), err)
	}
	w.advanceDurable(endSeq)
	return nil
}

// roll seals the active segment (already synced by writePiece) and makes the
// segment based at base active: exclusive create, then a directory fsync
// before anything is written to it.
func (w *WAL) roll(base uint64) error {
	old := w.active
	w.active = nil
	if err := closeFile(old); err != nil {
		return err
	}
	f, err := createSegment(w.opts.FS, w.opts.Dir, base)
	if err != nil {
		return err
	}
	w.active, w.activeSize = f, 0
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments = append(w.segments, newSegment(w.opts.Dir, base, nil))
	return nil
}

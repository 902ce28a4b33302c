package wal

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// syncLoop is the group-commit goroutine: on a poke or the backstop it
// takes the commit turn (commit.go), detaches the filling buffer and writes
// and fsyncs it once. The 10 ms
// backstop is armed only while the last wake found a batch: a record staged
// while a commit is in flight pokes (commitOrAwait), so an idle WAL sleeps
// on the poke alone and costs no wake-ups. At Close it completes whatever was staged before the WAL
// closed, then exits.
func (w *WAL) syncLoop() {
	defer close(w.loopDone)
	t := time.NewTimer(w.opts.SyncInterval)
	t.Stop() // a WAL opens idle: no backstop until a wake finds a batch
	defer t.Stop()
	for {
		select {
		case <-w.poke:
		case <-t.C:
		case <-w.stopLoop:
			w.commitTurn()
			return
		}
		w.loopWakes.Add(1)
		t.Stop()
		if w.commitTurn() {
			t.Reset(w.opts.SyncInterval)
		}
	}
}

// commitStaged detaches the filling buffer (appenders go on staging into the
// other one), writes and fsyncs it without holding mu, then completes its
// batch. The caller holds the commit turn (commitMu). A latched WAL writes nothing and fails the batch. It reports
// whether there was a batch.
func (w *WAL) commitStaged() bool {
	w.mu.Lock()
	st := w.cur
	if st.batch == nil {
		w.mu.Unlock()
		return false
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
	return true
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
// the rest. The durable frontier moves after each synced piece. Once the
// active segment is half full, the next one starts being prepared.
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
	if err := w.writePiece(st.buf[start:], st.endSeq); err != nil {
		return err
	}
	w.prep.maybeStart(w.activeSize)
	return nil
}

// writePiece appends p (whole frames) to the active segment and makes every
// sequence below endSeq durable. An ordinary segment takes p in one write and
// one fsync; a prepared one in runs of whole frames of at most 16 MiB, so a
// crash tears at most one run. A piece that would reach a prepared segment's
// trailer first turns it into an ordinary segment.
func (w *WAL) writePiece(p []byte, endSeq uint64) error {
	if w.activeLimit > 0 && w.activeSize+int64(len(p)) > w.activeLimit {
		if err := truncateSynced(w.active, w.activeSize, "piece past the preparation limit"); err != nil {
			return err
		}
		w.activeLimit = 0
	}
	for len(p) > 0 {
		n, runEnd := len(p), endSeq
		if w.activeLimit > 0 {
			n, runEnd = preparedRun(p, endSeq)
		}
		if err := w.writeRun(p[:n], runEnd); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// writeRun writes p at the data end, fsyncs once and makes every sequence
// below endSeq durable.
func (w *WAL) writeRun(p []byte, endSeq uint64) error {
	if _, err := w.active.WriteAt(p, w.activeSize); err != nil {
		return fmt.Errorf("write %d bytes at %d of %s: %w", len(p), w.activeSize, w.active.Name(), err)
	}
	w.activeSize += int64(len(p))
	if err := w.active.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.active.Name(), err)
	}
	w.advanceDurable(endSeq, w.activeSize)
	return nil
}

// preparedRun returns the length of the longest prefix of whole frames of p
// within preparedRunMaxBytes (at least one frame) and the sequence after its
// last frame; endSeq when the run is all of p.
func preparedRun(p []byte, endSeq uint64) (int, uint64) {
	n := 0
	var next uint64
	for n < len(p) {
		frame := frameHeaderBytes + int(binary.BigEndian.Uint32(p[n+4:]))
		if n > 0 && n+frame > preparedRunMaxBytes {
			return n, next
		}
		next = binary.BigEndian.Uint64(p[n+8:]) + 1
		n += frame
	}
	return n, endSeq
}

// roll seals the active segment (already synced by writePiece; a prepared one
// is trimmed to its data) and makes the segment based at base active: the
// ready spare renamed into place, or else an exclusive create; either way the
// directory is fsynced before anything is written to it.
func (w *WAL) roll(base uint64) error {
	old := w.active
	w.active = nil
	if w.activeLimit > 0 {
		if err := truncateSynced(old, w.activeSize, "sealing a prepared segment"); err != nil {
			_ = old.Close()
			return err
		}
	}
	if err := closeFile(old); err != nil {
		return err
	}
	f, limit, err := w.nextSegment(base)
	if err != nil {
		return err
	}
	sealedEnd := w.activeSize
	w.active, w.activeSize, w.activeLimit = f, 0, limit
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments[len(w.segments)-1].end = sealedEnd
	w.segments = append(w.segments, newSegment(w.opts.Dir, base, nil))
	w.activeEnd = 0
	return nil
}

// nextSegment opens the segment based at base: the ready spare (with its
// write limit) or a new empty file (limit 0).
func (w *WAL) nextSegment(base uint64) (vfs.File, int64, error) {
	if w.prep.take() {
		f, err := installPrepared(w.opts.FS, w.opts.Dir, base)
		return f, w.prep.limit, err
	}
	f, err := createSegment(w.opts.FS, w.opts.Dir, base)
	return f, 0, err
}

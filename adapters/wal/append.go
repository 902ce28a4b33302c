package wal

import (
	"context"
	"fmt"
	"slices"

	"github.com/narad/narad/domain"
)

// stage is one staging buffer: the frames staged since the last detach, the
// segment rolls between them and the batch their appenders wait on.
type stage struct {
	buf    []byte
	rolls  []rollMark
	batch  *batch // nil while nothing is staged
	endSeq uint64 // sequence after the last staged record
}

// rollMark asks the sync loop to roll to a new segment based at base before
// writing buf[at:].
type rollMark struct {
	at   int
	base uint64
}

// batch is one group commit: closed done means err is final.
type batch struct {
	done chan struct{}
	err  error
}

// reset empties s for reuse, dropping a buffer grown above the keep limit.
func (s *stage) reset() {
	if cap(s.buf) > stagingBufferKeepMaxBytes {
		s.buf = nil
	}
	s.buf = s.buf[:0]
	s.rolls = s.rolls[:0]
	s.batch = nil
}

// Append stages rec and returns its sequence once it is durable. ctx counts
// only until rec is staged; a staged record always waits for the real outcome.
func (w *WAL) Append(ctx context.Context, rec domain.IngressRecord) (uint64, error) {
	size, err := checkRecord(rec)
	if err != nil {
		return 0, fmt.Errorf("wal: append: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("wal: append: %w", err)
	}
	w.mu.Lock()
	if err := w.admitLocked("append"); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	seq := w.nextSeq
	w.stageLocked(rec, size)
	b := w.cur.batch
	w.mu.Unlock()
	if err := w.commitOrAwait(b); err != nil {
		return 0, err
	}
	return seq, nil
}

// AppendMany validates every record first, then stages all of them under one
// hold of the lock (consecutive sequences, nothing interleaved) and waits
// once. It returns the first sequence once all are durable.
func (w *WAL) AppendMany(ctx context.Context, recs []domain.IngressRecord) (uint64, error) {
	sizes := make([]int, len(recs))
	total := 0
	for i, rec := range recs {
		size, err := checkRecord(rec)
		if err != nil {
			return 0, fmt.Errorf("wal: append many: record %d: %w", i, err)
		}
		sizes[i] = size
		total += frameHeaderBytes + size
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("wal: append many: %w", err)
	}
	w.mu.Lock()
	if err := w.admitLocked("append many"); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	first := w.nextSeq
	if len(recs) == 0 {
		w.mu.Unlock()
		return first, nil
	}
	w.cur.buf = slices.Grow(w.cur.buf, total)
	for i, rec := range recs {
		w.stageLocked(rec, sizes[i])
	}
	b := w.cur.batch
	w.mu.Unlock()
	if err := w.commitOrAwait(b); err != nil {
		return 0, err
	}
	return first, nil
}

// admitLocked refuses new records once the WAL is closed or latched.
func (w *WAL) admitLocked(op string) error {
	if w.closed {
		return w.errClosed(op)
	}
	return w.failErr
}

// stageLocked encodes rec as the next frame into the filling buffer, marking
// a segment roll first when the frame would push the active segment past its
// size limit. No frame ever spans two segments.
func (w *WAL) stageLocked(rec domain.IngressRecord, size int) {
	st := w.cur
	frameLen := int64(frameHeaderBytes + size)
	if w.stageSegSize > 0 && w.stageSegSize+frameLen > w.opts.SegmentSizeMaxBytes {
		st.rolls = append(st.rolls, rollMark{at: len(st.buf), base: w.nextSeq})
		w.stageSegSize = 0
	}
	st.buf = appendFrame(st.buf, w.nextSeq, rec, size)
	w.stageSegSize += frameLen
	w.nextSeq++
	st.endSeq = w.nextSeq
	if st.batch == nil {
		st.batch = &batch{done: make(chan struct{})}
	}
}

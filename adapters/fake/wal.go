package fake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// walRecordMaxBytes is the ingress WAL's cap on one encoded record (16 MiB).
const walRecordMaxBytes = 16 << 20

// ErrFakeWALFailure is what FailNextAppend(nil) arms; it wraps
// domain.ErrWALFailed.
var ErrFakeWALFailure = fmt.Errorf("fake wal: injected failure: %w", domain.ErrWALFailed)

var _ ports.IngressWAL = (*WAL)(nil)

// WAL is an in-memory ports.IngressWAL: every accepted record is durable at
// once. Reopen gives a new WAL over the same records and checkpoint, as a
// process restart would. Safe for concurrent use.
type WAL struct {
	store *walStore

	// Guarded by store.mu.
	closed    bool
	durableCh chan struct{}
}

// walStore is what survives Reopen.
type walStore struct {
	mu         sync.Mutex
	records    []domain.IngressRecord // records[i] has sequence i
	checkpoint uint64
	failNext   error
}

// NewWAL returns an empty fake WAL.
func NewWAL() *WAL { return newWALOn(&walStore{}) }

func newWALOn(s *walStore) *WAL { return &WAL{store: s, durableCh: make(chan struct{})} }

// Reopen returns a new WAL holding the same records and checkpoint. Close the
// old one first, as a restart would.
func (w *WAL) Reopen() *WAL { return newWALOn(w.store) }

// FailNextAppend makes the next Append or AppendMany fail with err (or with
// ErrFakeWALFailure when err is nil) and append nothing.
func (w *WAL) FailNextAppend(err error) {
	if err == nil {
		err = ErrFakeWALFailure
	}
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	w.store.failNext = err
}

// Append appends a copy of rec and returns its sequence.
func (w *WAL) Append(ctx context.Context, rec domain.IngressRecord) (uint64, error) {
	return w.AppendMany(ctx, []domain.IngressRecord{rec})
}

// AppendMany appends copies of recs with consecutive sequences after checking
// all of them; it returns the first sequence.
func (w *WAL) AppendMany(ctx context.Context, recs []domain.IngressRecord) (uint64, error) {
	for i, rec := range recs {
		if err := checkWALRecord(rec); err != nil {
			return 0, fmt.Errorf("fake wal: record %d: %w", i, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fake wal: %w", err)
	}
	s := w.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.closed {
		return 0, fmt.Errorf("fake wal: append: %w", domain.ErrClosed)
	}
	if err := s.failNext; err != nil {
		s.failNext = nil
		return 0, err
	}
	first := uint64(len(s.records))
	if len(recs) == 0 {
		return first, nil
	}
	for _, rec := range recs {
		s.records = append(s.records, cloneRecord(rec))
	}
	close(w.durableCh)
	w.durableCh = make(chan struct{})
	return first, nil
}

// checkWALRecord applies the WAL's rules: domain validation and the 16 MiB
// cap on the encoded record (spec 2.2 layout: format 1, or format 2 with a
// topic id).
func checkWALRecord(rec domain.IngressRecord) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	size := 1 + 4 + len(rec.Topic) + 4 + len(rec.Key) + 4 + 8 + 4 + len(rec.Payload)
	if rec.TopicID != "" {
		size += 4 + len(rec.TopicID)
	}
	if size > walRecordMaxBytes {
		return fmt.Errorf("record of %d encoded bytes: %w", size, domain.ErrRecordTooLarge)
	}
	return nil
}

func cloneRecord(rec domain.IngressRecord) domain.IngressRecord {
	rec.Key = bytes.Clone(rec.Key)
	rec.Payload = bytes.Clone(rec.Payload)
	return rec
}

// ReadFrom returns copies of up to limit records from sequence from on.
func (w *WAL) ReadFrom(from uint64, limit int) ([]ports.WALEntry, error) {
	s := w.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("fake wal: read: %w", domain.ErrClosed)
	}
	var out []ports.WALEntry
	for seq := from; seq < uint64(len(s.records)) && len(out) < limit; seq++ {
		out = append(out, ports.WALEntry{Seq: seq, Record: cloneRecord(s.records[seq])})
	}
	return out, nil
}

// DurableNext is the number of records appended.
func (w *WAL) DurableNext() uint64 {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	return uint64(len(w.store.records))
}

// Durable returns a channel closed at the next append or at Close.
func (w *WAL) Durable() <-chan struct{} {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	return w.durableCh
}

// Checkpoint returns the stored checkpoint.
func (w *WAL) Checkpoint() uint64 {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	return w.store.checkpoint
}

// ErrFakeCheckpoint is returned for a checkpoint past DurableNext or going
// backwards.
var ErrFakeCheckpoint = errors.New("fake wal: checkpoint out of range")

// StoreCheckpoint stores seq, which must lie between the stored checkpoint
// and DurableNext.
func (w *WAL) StoreCheckpoint(seq uint64) error {
	s := w.store
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case w.closed:
		return fmt.Errorf("fake wal: store checkpoint: %w", domain.ErrClosed)
	case seq > uint64(len(s.records)):
		return fmt.Errorf("checkpoint %d past durable next %d: %w", seq, len(s.records), ErrFakeCheckpoint)
	case seq < s.checkpoint:
		return fmt.Errorf("checkpoint %d below %d: %w", seq, s.checkpoint, ErrFakeCheckpoint)
	}
	s.checkpoint = seq
	return nil
}

// Close closes the Durable channel; later appends fail with domain.ErrClosed.
// Idempotent.
func (w *WAL) Close() error {
	w.store.mu.Lock()
	defer w.store.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.durableCh)
	}
	return nil
}

package segmentlog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// CommitDurable appends recs to the partition's log under its produce lock,
// fsyncs once, reads every frame back, advances the high watermark and
// returns the first offset. A zero CommittedAtMs is stamped with the store's
// clock; every commit time is raised to the partition's floor. A failed
// commit leaves nothing above the high watermark. Errors:
// domain.ErrInvalidRecord, domain.ErrRecordTooLarge, domain.ErrLogPoisoned,
// domain.ErrClosed, ErrStaleIncarnation, or an I/O error.
func (s *Store) CommitDurable(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (int64, error) {
	return s.write(ctx, ref, recs, (*partitionLog).commit)
}

// Append buffers recs on the partition's log and returns the first offset
// at once. They become readable only after the log's flusher has written,
// fsynced and verified them (within about two seconds), or after Sync.
func (s *Store) Append(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (int64, error) {
	return s.write(ctx, ref, recs, (*partitionLog).append)
}

func (s *Store) write(ctx context.Context, ref domain.PartitionRef, recs []domain.Record,
	op func(*partitionLog, []domain.Record) (int64, error)) (int64, error) {
	if err := validateRef(ref); err != nil {
		return 0, err
	}
	if err := checkRecords(recs); err != nil {
		return 0, fmt.Errorf("segmentlog: %s: %w", ref, err)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	if sl.freeze.active(s.opts.Now()) {
		return 0, errFrozen(ref)
	}
	for range commitReresolveMax {
		l, err := s.resolve(sl, ref.TopicID, true)
		if err != nil {
			return 0, err
		}
		first, err := op(l, recs)
		if err != errLogClosed {
			return first, err
		}
		// Closed under us: a newer incarnation retired it. Resolve again.
	}
	return 0, fmt.Errorf("segmentlog: %s kept closing: %w", ref, domain.ErrLogClosed)
}

// Sync makes everything appended to the partition durable and readable.
func (s *Store) Sync(ref domain.PartitionRef) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	l, err := s.resolve(sl, ref.TopicID, true)
	if err != nil {
		return err
	}
	return l.sync()
}

// Read returns up to maxRecords committed records from offset from on,
// contiguous, stopping once their keys and payloads pass maxBytes (at least
// one record; maxBytes <= 0 sets no byte bound; maxRecords < 1 reads one).
// Errors: domain.ErrOffsetNegative, domain.ErrOffsetNotWritten,
// domain.ErrOffsetGone, domain.ErrRecordCorrupt, domain.ErrLogClosed (also
// for ErrStaleIncarnation and a closed store). Records share read-only
// buffers: callers must not modify them.
func (s *Store) Read(ctx context.Context, ref domain.PartitionRef, from int64, maxRecords, maxBytes int) ([]domain.Record, error) {
	if err := validateRef(ref); err != nil {
		return nil, err
	}
	if from < 0 {
		return nil, fmt.Errorf("segmentlog: read %s at %d: %w", ref, from, domain.ErrOffsetNegative)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := s.resolve(s.slotFor(ref), ref.TopicID, true)
	if err != nil {
		return nil, err
	}
	return l.read(from, maxRecords, maxBytes)
}

// Bounds reports the readable range without stamping use. A closed log
// answers from its hwm file when that holds a boundary; otherwise the log is
// opened (unstamped, so idle eviction closes it again).
func (s *Store) Bounds(ref domain.PartitionRef) (ports.LogBounds, error) {
	if err := validateRef(ref); err != nil {
		return ports.LogBounds{}, err
	}
	sl := s.slotFor(ref)
	b, err := s.bounds(sl, ref)
	b.Frozen = err == nil && sl.freeze.holdsAt(s.opts.Now)
	return b, err
}

func (s *Store) bounds(sl *slot, ref domain.PartitionRef) (ports.LogBounds, error) {
	if l := sl.log.Load(); l != nil && sl.topic.serves(ref.TopicID) {
		return l.bounds(), nil
	}
	b, ok, err := s.peekClosed(sl, ref.TopicID)
	if err != nil || ok {
		return b, err
	}
	l, err := s.resolve(sl, ref.TopicID, false)
	if err != nil {
		return ports.LogBounds{}, err
	}
	return l.bounds(), nil
}

// peekClosed answers Bounds for a closed log from disk, under the topic
// guard so it never reads a half-written hwm file. ok is false when the log
// must be opened to know.
func (s *Store) peekClosed(sl *slot, id domain.TopicID) (ports.LogBounds, bool, error) {
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return ports.LogBounds{}, false, errStoreClosed
	}
	if l := sl.log.Load(); l != nil && t.serves(id) {
		return l.bounds(), true, nil
	}
	if err := s.loadMarkerLocked(t); err != nil {
		return ports.LogBounds{}, false, err
	}
	if id != "" && t.retired[id] {
		return ports.LogBounds{}, false, staleError(t.name, id)
	}
	if cur := *t.id.Load(); id != "" && cur != "" && cur != id {
		return ports.LogBounds{}, true, nil // another incarnation's directory holds nothing of id's
	}
	if _, err := s.opts.FS.Stat(sl.dir); errors.Is(err, fs.ErrNotExist) {
		return ports.LogBounds{}, true, nil
	}
	hwm, size, err := readHWMFile(s.opts.FS, filepath.Join(sl.dir, hwmFileName))
	if err != nil || size != hwmFileBytes {
		return ports.LogBounds{}, false, err
	}
	bases, err := listSegments(s.opts.FS, sl.dir)
	if err != nil {
		return ports.LogBounds{}, false, err
	}
	oldest := hwm
	if len(bases) > 0 {
		oldest = min(bases[0], hwm)
	}
	return ports.LogBounds{Oldest: oldest, HighWatermark: hwm}, true, nil
}

// Changed returns a channel closed at the partition's next high-watermark
// advance or log close. It opens nothing.
func (s *Store) Changed(ref domain.PartitionRef) (<-chan struct{}, error) {
	if err := validateRef(ref); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errStoreClosed
	}
	return s.slotFor(ref).changed(), nil
}

// SetRetention bounds the age of the topic's records (0 keeps them
// forever). It applies to the topic's open logs at once and to logs opened
// later; a retired incarnation's setting is ignored.
func (s *Store) SetRetention(topic string, id domain.TopicID, retention time.Duration) {
	if !validTopicName(topic) || !id.Valid() {
		return
	}
	t := s.topic(topic)
	t.guard.Lock()
	stale := id != "" && t.retired[id]
	if !stale {
		t.retention.Store(int64(max(retention, 0)))
	}
	t.guard.Unlock()
	if stale {
		return
	}
	for _, sl := range s.topicSlots(t) {
		if l := sl.log.Load(); l != nil {
			l.retention.Store(int64(max(retention, 0)))
		}
	}
}

// Remove deletes the partition's directory, closing its log first. A
// directory stamped with another incarnation is left alone. Destructive:
// callers confirm with the Raft leader first.
func (s *Store) Remove(ref domain.PartitionRef) error {
	if err := validateRef(ref); err != nil {
		return err
	}
	sl := s.slotFor(ref)
	sl.produce.Lock()
	defer sl.produce.Unlock()
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return errStoreClosed
	}
	if err := s.loadMarkerLocked(t); err != nil {
		return err
	}
	if cur := *t.id.Load(); ref.TopicID != "" && cur != "" && cur != ref.TopicID {
		return nil
	}
	if l := sl.log.Swap(nil); l != nil {
		_ = l.close(false)
	}
	s.schedForget(sl)
	sl.floor.Store(0)
	defer sl.broadcast()
	if err := s.opts.FS.RemoveAll(sl.dir); err != nil {
		return fmt.Errorf("segmentlog: remove %s: %w", sl.dir, err)
	}
	if err := s.opts.FS.SyncDir(t.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("segmentlog: remove %s: sync %s: %w", sl.dir, t.dir, err)
	}
	return nil
}

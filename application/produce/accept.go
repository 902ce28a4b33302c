package produce

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// TopicReader is what accepting needs from the metadata replica: topic and
// schema views, and the applied index that keys the schema cache.
type TopicReader interface {
	ports.MetadataTopics
	AppliedIndex() uint64
}

// ServiceDeps are the Service's ports; every one is required.
type ServiceDeps struct {
	Topics  TopicReader
	WAL     ports.IngressAppender
	Schemas ports.SchemaValidator
	Clock   ports.Clock
	Metrics ports.Metrics
	// Drain says whether this node is being decommissioned; nil means
	// never. A draining node refuses client produces (domain.ErrDraining).
	Drain interface{ Draining() bool }
	// Owned, when set, commits a single produce straight into its
	// partition's log when this node owns the partition, instead of
	// appending it to the WAL (internals.md §3.10); nil means always the
	// WAL.
	Owned *Committer
}

// Service accepts produces into the ingress WAL, or a single produce for a
// partition this node owns straight into its log. Safe for concurrent use.
type Service struct {
	topics   TopicReader
	wal      ports.IngressAppender
	schemas  ports.SchemaValidator
	clock    ports.Clock
	metrics  ports.Metrics
	drain    interface{ Draining() bool }
	owned    *Committer
	inFlight atomic.Int64 // produces being accepted now (NodeStatus)
	rotation *rotations
	cache    *topicCache
}

// NewService returns a Service over d; it panics on a missing dependency.
func NewService(d ServiceDeps) *Service {
	switch {
	case d.Topics == nil:
		panic("produce: nil topic reader")
	case d.WAL == nil:
		panic("produce: nil WAL")
	case d.Schemas == nil:
		panic("produce: nil schema validator")
	case d.Clock == nil:
		panic("produce: nil clock")
	case d.Metrics == nil:
		panic("produce: nil metrics")
	}
	return &Service{
		topics: d.Topics, wal: d.WAL, schemas: d.Schemas, clock: d.Clock, metrics: d.Metrics, drain: d.Drain, owned: d.Owned,
		rotation: newRotations(), cache: newTopicCache(),
	}
}

// Request is one single produce. Partition pins the record when set; an
// empty Key means keyless (round-robin, stored without a key).
type Request struct {
	Topic     string
	Key       []byte
	Partition *int32
	Payload   []byte
	// DelayMs, or DeliverAtMs (unix ms), schedules the message (Message).
	DelayMs     *int64
	DeliverAtMs *int64
}

// Accept validates r against the local replica, picks its partition and
// returns once the record is durable (the 202 line): committed to the
// partition's log when this node owns it and the commit succeeds, else in
// the ingress WAL.
// Refusals: domain.ErrEmptyMessage, domain.ErrRecordTooLarge,
// domain.ErrTopicNotFound, domain.ErrDelayedChildProduce, a remote child
// stub (domain.ErrConflict), a schema refusal
// (domain.ErrInvalidArgument or domain.ErrUnavailable),
// domain.ErrPartitionOutOfRange. WAL failures: domain.ErrWALFailed,
// domain.ErrClosed. A metadata read failure wraps domain.ErrUnavailable.
// A draining node refuses every produce with domain.ErrDraining.
func (s *Service) Accept(ctx context.Context, r Request) error {
	if s.draining() {
		return domain.ErrDraining
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	msg := Message{Key: r.Key, Partition: r.Partition, Payload: r.Payload, DelayMs: r.DelayMs, DeliverAtMs: r.DeliverAtMs}
	if err := checkFormat(msg); err != nil {
		return err
	}
	t, sch, err := s.lookup(r.Topic)
	if err != nil {
		return err
	}
	if err := s.checkContent(ctx, t, sch, msg); err != nil {
		return err
	}
	now := s.clock.Now()
	at, err := deliverAt(t, msg, now.UnixMilli())
	if err != nil {
		return err
	}
	rec := s.record(t, msg, now.UnixMilli(), at)
	var turn uint64
	if rotates(msg) {
		turn = s.rotation.take(t.Name, 1, now)
	}
	rec.Partition = s.partition(t, msg, turn)
	if done, err := s.commitOwned(ctx, t, rec); done {
		return err
	}
	if _, err := s.wal.Append(ctx, rec); err != nil {
		return fmt.Errorf("produce: append to %s: %w", t.Name, err)
	}
	return nil
}

// commitOwned commits rec straight into its partition when this node owns
// it: one fsync of the partition log instead of one of the WAL and one of
// the log, and no hand-off to the dispatcher. done is false when rec is
// still to be appended to the WAL: the partition is not this node's, or
// the commit was refused or failed (a failed commit leaves nothing behind,
// so the WAL's copy is the only one). A caller that gave up meanwhile is
// answered with its context's error instead, its record stored nowhere or
// committed (a produce without an answer may be delivered).
func (s *Service) commitOwned(ctx context.Context, t meta.Topic, rec domain.IngressRecord) (done bool, err error) {
	if s.owned == nil {
		return false, nil
	}
	owned, err := s.owned.commitOwned(ctx, t, rec)
	switch {
	case !owned:
		return false, nil
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return true, fmt.Errorf("produce: commit to %s/%d: %w", t.Name, rec.Partition, err)
	}
	return false, nil
}

// InFlight counts the produces, single or batch, being accepted now.
func (s *Service) InFlight() int64 { return s.inFlight.Load() }

// draining reports whether this node is being decommissioned.
func (s *Service) draining() bool { return s.drain != nil && s.drain.Draining() }

// checkFormat is what a message must satisfy before any lookup: a payload
// of 1 byte to 1 MiB, a non-negative pin and a well-formed schedule.
func checkFormat(m Message) error {
	switch {
	case len(m.Payload) == 0:
		return domain.ErrEmptyMessage
	case len(m.Payload) > MessageMaxBytes:
		return fmt.Errorf("produce: payload of %d bytes: %w", len(m.Payload), domain.ErrRecordTooLarge)
	case m.Partition != nil && *m.Partition < 0:
		return domain.Refuse(domain.ErrInvalidArgument, "invalid partition: must be >= 0")
	}
	return CheckSchedule(m)
}

// lookup reads the topic and its current schema (nil when none) from the
// local replica and refuses remote child stubs and delay children.
func (s *Service) lookup(name string) (meta.Topic, *meta.SchemaVersion, error) {
	e, ok, err := s.cache.get(s.topics, name)
	t := e.topic
	switch {
	case err != nil:
		return meta.Topic{}, nil, errReplica(name, err)
	case !ok:
		return meta.Topic{}, nil, domain.ErrTopicNotFound
	case t.IsRemoteStub():
		s.metrics.ProduceRejected(name, rejectRemoteChild)
		return meta.Topic{}, nil, domain.Refuse(domain.ErrConflict,
			fmt.Sprintf("remote child %q lives on remote %s; consume it there", name, t.Remote.Name))
	case t.Partitions < 1:
		return meta.Topic{}, nil, fmt.Errorf("produce: topic %q has %d partitions: %w", name, t.Partitions, domain.ErrUnavailable)
	case t.Parent != "" && t.FanoutDelayMs > 0:
		s.metrics.ProduceRejected(name, rejectDelayedChild)
		return meta.Topic{}, nil, domain.ErrDelayedChildProduce
	}
	return t, e.latest, nil
}

// checkContent validates m against the topic's current schema (if any),
// then its pinned partition against the partition count.
func (s *Service) checkContent(ctx context.Context, t meta.Topic, sch *meta.SchemaVersion, m Message) error {
	if sch != nil {
		err := s.schemas.Validate(ctx, schemaKey(t, sch.Version), sch.Schema, m.Payload)
		if err != nil {
			if errors.Is(err, domain.ErrInvalidArgument) {
				s.metrics.ProduceRejected(t.Name, rejectSchema)
			}
			return fmt.Errorf("produce: %s: %w", t.Name, err)
		}
	}
	if m.Partition != nil && *m.Partition >= t.Partitions {
		return domain.ErrPartitionOutOfRange
	}
	return nil
}

// record builds m's WAL record for incarnation t, scheduled for
// deliverAtMs when that is set; the caller sets the partition.
func (s *Service) record(t meta.Topic, m Message, createdAtMs, deliverAtMs int64) domain.IngressRecord {
	var key []byte
	if len(m.Key) > 0 {
		key = m.Key
	}
	return domain.IngressRecord{
		Topic: t.Name, TopicID: domain.TopicID(t.ID), Key: key, CreatedAtMs: createdAtMs, Payload: m.Payload,
		DeliverAtMs: deliverAtMs,
	}
}

// rotates reports whether m takes a turn of the keyless rotation.
func rotates(m Message) bool { return m.Partition == nil && len(m.Key) == 0 }

// partition is the pin, else the key's hash, else the rotation value turn.
func (s *Service) partition(t meta.Topic, m Message, turn uint64) int32 {
	switch {
	case m.Partition != nil:
		return *m.Partition
	case len(m.Key) > 0:
		return domain.KeyPartition(m.Key, int(t.Partitions))
	}
	return int32(turn % uint64(t.Partitions))
}

package partitionstats

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Store is what the owner reads from its metadata replica: the topic (its
// live incarnation and partition count) and the partition assignments.
type Store interface {
	ports.MetadataTopics
	ports.MetadataCluster
}

// Peeker is the one partition-log method the owner uses:
// ports.PartitionLogs satisfies it.
type Peeker interface {
	LogStats(ref domain.PartitionRef) (ports.LogStats, error)
}

// Reader answers other nodes' statistics requests from this node's own
// partition logs. Safe for concurrent use.
type Reader struct {
	store Store
	logs  Peeker
	self  string
}

// New returns a Reader for the node self; it panics on a missing
// dependency (a wiring error).
func New(store Store, logs Peeker, self string) *Reader {
	switch {
	case store == nil:
		panic("partitionstats: nil store")
	case logs == nil:
		panic("partitionstats: nil partition logs")
	case self == "":
		panic("partitionstats: empty node id")
	}
	return &Reader{store: store, logs: logs, self: self}
}

// PartitionStats returns this node's LogStats for each partition in parts,
// in order, for the incarnation id of topic (empty: the live one). It
// refuses the whole request, answering nothing: domain.ErrTopicNotFound when
// the topic is absent here or id is not the incarnation this node holds;
// domain.ErrPartitionOutOfRange for an index outside the topic;
// domain.ErrNotOwner when this node's replica does not assign one of parts
// to it (for this incarnation); domain.ErrUnavailable when the replica
// cannot be read; ctx.Err(). A log's own error (domain.ErrLogClosed,
// domain.ErrClosed, an I/O error) is returned wrapped.
func (r *Reader) PartitionStats(ctx context.Context, topic string, id domain.TopicID, parts []int32) ([]ports.LogStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := r.liveTopic(topic, id)
	if err != nil {
		return nil, err
	}
	out := make([]ports.LogStats, len(parts))
	for i, p := range parts {
		ref := domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: p}
		if err := r.checkOwner(t, ref); err != nil {
			return nil, err
		}
		if out[i], err = r.logs.LogStats(ref); err != nil {
			return nil, fmt.Errorf("partitionstats: peek %s: %w", ref, err)
		}
	}
	return out, nil
}

// liveTopic reads topic and checks that id, when given, is its live
// incarnation on this node.
func (r *Reader) liveTopic(topic string, id domain.TopicID) (meta.Topic, error) {
	t, ok, err := r.store.Topic(topic)
	switch {
	case err != nil:
		return meta.Topic{}, fmt.Errorf("partitionstats: read topic %q: %w: %w", topic, domain.ErrUnavailable, err)
	case !ok:
		return meta.Topic{}, fmt.Errorf("partitionstats: topic %q absent on %s: %w", topic, r.self, domain.ErrTopicNotFound)
	case id != "" && string(id) != t.ID:
		return meta.Topic{}, fmt.Errorf("partitionstats: %s holds incarnation %q of %q, asked for %q: %w",
			r.self, t.ID, topic, id, domain.ErrTopicNotFound)
	}
	return t, nil
}

// checkOwner refuses a partition outside t or not assigned to this node for
// t's incarnation (the same test as the owner-side commit's).
func (r *Reader) checkOwner(t meta.Topic, ref domain.PartitionRef) error {
	if ref.Partition < 0 || ref.Partition >= t.Partitions {
		return fmt.Errorf("partitionstats: %s has %d partitions: %w", ref, t.Partitions, domain.ErrPartitionOutOfRange)
	}
	row, ok, err := r.store.Assignment(ref.Topic, ref.Partition)
	switch {
	case err != nil:
		return fmt.Errorf("partitionstats: read assignment of %s: %w: %w", ref, domain.ErrUnavailable, err)
	case !ok || row.Owner != r.self || !row.BelongsTo(string(ref.TopicID)):
		return fmt.Errorf("partitionstats: %s is not owned by %s: %w", ref, r.self, domain.ErrNotOwner)
	}
	return nil
}

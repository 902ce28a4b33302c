package produce

import (
	"context"
	"fmt"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Store is what the dispatcher and the owner-side commit read from the
// metadata replica: topics, placement and freshness.
type Store interface {
	ports.MetadataTopics
	ports.MetadataCluster
	ports.MetadataFreshness
}

// CommitterDeps are the Committer's ports; every one is required. Self is
// this node's member id.
type CommitterDeps struct {
	Store   Store
	Logs    ports.PartitionWriter
	Latch   *leaderconfirm.Latch
	Clock   ports.Clock
	Metrics ports.Metrics
	Self    string
	// Schedule keeps scheduled records (a per-message delay) until they
	// are due; nil refuses them (domain.ErrUnavailable), never commits
	// them early.
	Schedule ports.PartitionSchedule
}

// Committer is the owner side of a commit (internals.md §3.8): it re-checks
// ownership and that the batch's incarnation is the live one, then commits
// through the partition log. The local dispatcher calls it directly; the
// node RPC handler calls it for batches accepted elsewhere. Safe for
// concurrent use.
type Committer struct {
	store   Store
	comb    *combiner
	latch   *leaderconfirm.Latch
	clock   ports.Clock
	metrics ports.Metrics
	self    string
	sched   ports.PartitionSchedule
}

// NewCommitter returns a Committer over d; it panics on a missing
// dependency.
func NewCommitter(d CommitterDeps) *Committer {
	switch {
	case d.Store == nil:
		panic("produce: nil store")
	case d.Logs == nil:
		panic("produce: nil partition logs")
	case d.Latch == nil:
		panic("produce: nil ownership latch")
	case d.Clock == nil:
		panic("produce: nil clock")
	case d.Metrics == nil:
		panic("produce: nil metrics")
	case d.Self == "":
		panic("produce: empty node id")
	}
	return &Committer{store: d.Store, comb: newCombiner(d.Logs, d.Clock), latch: d.Latch, clock: d.Clock, metrics: d.Metrics, self: d.Self, sched: d.Schedule}
}

// CommitBatch commits req durably on this node and returns the offset of
// its first record. It refuses, with nothing appended: before the ownership
// latch is set (domain.ErrUnavailable); when the topic is absent or is
// another incarnation than req.TopicID (domain.ErrTopicNotFound: the log is
// no longer the batch's, story F30); when this node does not own the
// partition (domain.ErrNotOwner). A batch without an id commits into the
// live incarnation by name. Commit errors are the partition log's; a failed
// commit leaves nothing behind, so the caller retries the same batch.
// Batches that reach one partition together share one fsync (combiner.go).
func (c *Committer) CommitBatch(ctx context.Context, req ports.CommitRequest) (int64, error) {
	if len(req.Records) == 0 {
		return 0, fmt.Errorf("produce: empty commit to %s/%d: %w", req.Topic, req.Partition, domain.ErrInvalidRecord)
	}
	if !c.latch.Ready(ctx) {
		return 0, fmt.Errorf("produce: commit to %s/%d before the ownership latch: %w", req.Topic, req.Partition, domain.ErrUnavailable)
	}
	ref, err := c.liveRef(req)
	if err != nil {
		return 0, err
	}
	if err := checkOwner(c.store, c.self, ref); err != nil {
		return 0, err
	}
	return c.commit(ctx, ref, req.Records)
}

// commitOwned commits rec straight into its partition when this node owns
// it (internals.md §3.10): owned is false, with nothing done, before the
// ownership latch is set or when the partition's assignment names another
// node or incarnation, and the caller appends rec to the ingress WAL. A
// refusal or failure of the commit itself leaves nothing behind (G10), so
// the caller may append rec to the WAL after it as well.
func (c *Committer) commitOwned(ctx context.Context, t meta.Topic, rec domain.IngressRecord) (owned bool, err error) {
	if !c.latch.IsSet() {
		return false, nil
	}
	ref := domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: rec.Partition}
	if mine, err := owns(c.store, c.self, ref); err != nil || !mine {
		return false, nil
	}
	recs := []domain.Record{{Key: rec.Key, Payload: rec.Payload, DeliverAtMs: rec.DeliverAtMs}}
	_, err = c.commit(ctx, ref, recs)
	return true, err
}

// commit stamps recs, keeps the scheduled ones in ref's schedule and
// commits the rest through the combiner; ownership was checked.
func (c *Committer) commit(ctx context.Context, ref domain.PartitionRef, records []domain.Record) (int64, error) {
	recs, later := c.stamp(records)
	if err := c.schedule(ctx, ref, later); err != nil {
		return 0, err
	}
	if len(recs) == 0 {
		return 0, nil
	}
	first, err := c.comb.commit(ctx, ref, recs)
	if err != nil {
		return 0, fmt.Errorf("produce: commit %d records to %s: %w", len(recs), ref, err)
	}
	c.metrics.MessagesProduced(ref.Topic, ref.Partition, len(recs), payloadBytes(recs))
	return first, nil
}

// liveRef resolves req to the live incarnation's partition, refusing a
// batch of another incarnation.
func (c *Committer) liveRef(req ports.CommitRequest) (domain.PartitionRef, error) {
	t, ok, err := c.store.Topic(req.Topic)
	switch {
	case err != nil:
		return domain.PartitionRef{}, fmt.Errorf("produce: read topic %q: %w: %w", req.Topic, domain.ErrUnavailable, err)
	case !ok:
		return domain.PartitionRef{}, fmt.Errorf("produce: commit to %s: topic absent: %w", req.Topic, domain.ErrTopicNotFound)
	case req.TopicID != "" && string(req.TopicID) != t.ID:
		return domain.PartitionRef{}, fmt.Errorf("produce: commit to %s: incarnation %s, live %s: %w",
			req.Topic, req.TopicID, t.ID, domain.ErrTopicNotFound)
	case req.Partition < 0 || req.Partition >= t.Partitions:
		return domain.PartitionRef{}, fmt.Errorf("produce: commit to %s/%d: %w", req.Topic, req.Partition, domain.ErrPartitionOutOfRange)
	}
	return domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: req.Partition}, nil
}

// checkOwner refuses ref unless self owns its incarnation now: the
// Committer before every commit, the Releaser before every release.
func checkOwner(store Store, self string, ref domain.PartitionRef) error {
	mine, err := owns(store, self, ref)
	switch {
	case err != nil:
		return fmt.Errorf("produce: read assignment of %s: %w: %w", ref, domain.ErrUnavailable, err)
	case !mine:
		return fmt.Errorf("produce: %s is not owned by %s: %w", ref, self, domain.ErrNotOwner)
	}
	return nil
}

// owns reports whether self owns ref's incarnation now, without building
// an error for a partition that is another node's (the owned produce asks
// it for every single produce).
func owns(store Store, self string, ref domain.PartitionRef) (bool, error) {
	row, ok, err := store.Assignment(ref.Topic, ref.Partition)
	if err != nil {
		return false, err
	}
	return ok && row.Owner == self && row.BelongsTo(string(ref.TopicID)), nil
}

// stamp proposes this node's time as the commit time of every record due
// now (the log raises it to keep commit times non-decreasing) and sets
// apart, in later, those scheduled for after now.
func (c *Committer) stamp(recs []domain.Record) (due, later []domain.Record) {
	now := c.clock.Now().UnixMilli()
	due = make([]domain.Record, 0, len(recs))
	for _, r := range recs {
		if r.DeliverAtMs > now {
			later = append(later, domain.Record{Key: r.Key, Payload: r.Payload, DeliverAtMs: r.DeliverAtMs})
			continue
		}
		due = append(due, domain.Record{Key: r.Key, Payload: r.Payload, CommittedAtMs: now})
	}
	return due, later
}

// schedule keeps recs in ref's schedule, durably, before the batch is
// acknowledged.
func (c *Committer) schedule(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if c.sched == nil {
		return fmt.Errorf("produce: %d scheduled records for %s on a node without a schedule: %w", len(recs), ref, domain.ErrUnavailable)
	}
	if err := c.sched.Schedule(ctx, ref, recs); err != nil {
		return fmt.Errorf("produce: schedule %d records on %s: %w", len(recs), ref, err)
	}
	c.metrics.MessagesScheduled(ref.Topic, ref.Partition, len(recs))
	return nil
}

func payloadBytes(recs []domain.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Payload)
	}
	return n
}

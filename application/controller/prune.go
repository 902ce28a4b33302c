package controller

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain/meta"
)

// prune deletes assignment rows that belong to no partition (internals
// §8.7, type 30): the topic is gone, the row names another incarnation, or
// its index is out of range. The state machine refuses a live row, so a
// row that turned live meanwhile survives. Callers have passed a barrier.
// A clean prune is not run again while the views it reads stand still.
func (c *Controller) prune(ctx context.Context) error {
	now := c.clock.Now()
	if c.term.pruned.holds(now, c.store.Versions()) {
		return nil
	}
	memo := c.settle(now)
	c.term.pruned = settled{}
	rows, err := c.store.AllAssignments()
	if err != nil {
		return fmt.Errorf("controller: prune: list assignments: %w", err)
	}
	topics := map[string]*meta.Topic{}
	for _, r := range rows {
		t, err := c.topicOf(topics, r.Topic)
		if err != nil {
			return err
		}
		if !orphan(r, t) {
			continue
		}
		if err := c.proposePrune(ctx, r); err != nil {
			return err
		}
	}
	c.term.pruned = memo
	return nil
}

// topicOf reads a topic once per pass; nil when absent.
func (c *Controller) topicOf(cache map[string]*meta.Topic, name string) (*meta.Topic, error) {
	if t, seen := cache[name]; seen {
		return t, nil
	}
	t, ok, err := c.store.Topic(name)
	if err != nil {
		return nil, fmt.Errorf("controller: prune: read topic %q: %w", name, err)
	}
	if !ok {
		cache[name] = nil
		return nil, nil
	}
	cache[name] = &t
	return &t, nil
}

// orphan reports whether row belongs to no partition of the live topic t.
func orphan(row meta.Assignment, t *meta.Topic) bool {
	switch {
	case t == nil:
		return true
	case row.Partition >= t.Partitions:
		return true
	}
	return !row.BelongsTo(t.ID)
}

func (c *Controller) proposePrune(ctx context.Context, r meta.Assignment) error {
	ev := &meta.PruneAssignment{Topic: r.Topic, Partition: r.Partition}
	applied, err := c.store.Propose(ctx, c.envelope(ev))
	if err != nil {
		return fmt.Errorf("controller: prune %s/%d: %w", r.Topic, r.Partition, err)
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		c.log.Info("controller: orphan assignment pruned", slog.String("topic", r.Topic),
			slog.String("topic_id", r.TopicID), slog.Int("partition", int(r.Partition)), slog.String("owner", r.Owner))
	case meta.CodeNotFound, meta.CodeRefused:
		// Gone already, or live again (a recreate): nothing to do.
	default:
		c.log.Warn("controller: orphan prune refused", slog.String("topic", r.Topic),
			slog.Int("partition", int(r.Partition)), slog.Any("error", applied.Result.Err()))
	}
	return nil
}

package controller

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain/meta"
)

// sweep places every unowned partition of every topic (internals §8.7,
// story F22): under the assignment lock, with the shared placement rule,
// one insert-only entry (type 29) per partition. A partition that has a row
// is never touched, whoever owns it and whether that owner lives. Callers
// have passed a barrier. A sweep that left nothing unplaced is not run
// again while the views it reads stand still (settled.go).
func (c *Controller) sweep(ctx context.Context) error {
	c.place.Lock()
	defer c.place.Unlock()
	now := c.clock.Now()
	if c.term.swept.holds(now, c.store.Versions()) {
		return nil
	}
	memo := c.settle(now)
	c.term.swept = settled{}
	candidates, err := c.candidates()
	if err != nil || len(candidates) == 0 {
		return err
	}
	topics, err := c.store.ListTopics("", 0)
	if err != nil {
		return fmt.Errorf("controller: sweep: list topics: %w", err)
	}
	rows, err := c.store.AllAssignments()
	if err != nil {
		// A list error is never read as "unassigned" (story F16).
		return fmt.Errorf("controller: sweep: list assignments: %w", err)
	}
	placed := ownersByTopic(rows)
	unplaced := 0
	for _, t := range topics {
		left, err := c.placeTopicOver(ctx, t, candidates, placed[t.Name])
		if err != nil {
			return err
		}
		unplaced += left
	}
	if unplaced == 0 {
		c.term.swept = memo
	}
	return nil
}

// ownersByTopic groups rows as topic → partition → owner.
func ownersByTopic(rows []meta.Assignment) map[string]map[int32]string {
	out := map[string]map[int32]string{}
	for _, r := range rows {
		m := out[r.Topic]
		if m == nil {
			m = map[int32]string{}
			out[r.Topic] = m
		}
		m[r.Partition] = r.Owner
	}
	return out
}

// candidates reads the members that may take a partition.
func (c *Controller) candidates() ([]string, error) {
	members, err := c.store.Members()
	if err != nil {
		return nil, fmt.Errorf("controller: read members: %w", err)
	}
	return meta.PlacementCandidates(members), nil
}

// placeTopic places t's unowned partitions, reading its rows first.
func (c *Controller) placeTopic(ctx context.Context, t meta.Topic, candidates []string) error {
	if t.ID == "" || t.Partitions <= 0 {
		return nil
	}
	placed, err := c.owners(t.Name)
	if err != nil {
		return err
	}
	_, err = c.placeTopicOver(ctx, t, candidates, placed)
	return err
}

// placeTopicOver places t's partitions missing from placed. A topic
// without an incarnation id (older than ids) cannot take an insert-only
// entry and is skipped. It returns how many partitions it had to leave
// for a later pass (their parent partition is unplaced).
func (c *Controller) placeTopicOver(ctx context.Context, t meta.Topic, candidates []string, placed map[int32]string) (left int, err error) {
	if t.ID == "" || t.Partitions <= 0 {
		return 0, nil
	}
	var missing []int32
	for p := range t.Partitions {
		if _, ok := placed[p]; !ok {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return 0, nil
	}
	parent, err := c.parentPlacement(t)
	if err != nil {
		return 0, err
	}
	for _, p := range missing {
		owner, ok := meta.PlaceOwner(candidates, p, parent)
		if !ok {
			left++
			continue // the parent partition is unplaced: a later pass places it
		}
		if err := c.assign(ctx, t, p, owner); err != nil {
			return left, err
		}
	}
	return left, nil
}

// owners reads a topic's rows as partition → owner. Any row counts as
// placed: a row of another incarnation is the pruner's, then the sweep's.
func (c *Controller) owners(topic string) (map[int32]string, error) {
	rows, err := c.store.Assignments(topic)
	if err != nil {
		// A list error is never read as "unassigned" (story F16).
		return nil, fmt.Errorf("controller: sweep: read assignments of %q: %w", topic, err)
	}
	out := make(map[int32]string, len(rows))
	for _, r := range rows {
		out[r.Partition] = r.Owner
	}
	return out, nil
}

// parentPlacement is the anti-affinity input of a fan-out child, nil for
// any other topic (or a child whose parent record is gone).
func (c *Controller) parentPlacement(t meta.Topic) (*meta.ParentPlacement, error) {
	if t.Parent == "" {
		return nil, nil
	}
	parent, ok, err := c.store.Topic(t.Parent)
	if err != nil {
		return nil, fmt.Errorf("controller: sweep: read parent %q: %w", t.Parent, err)
	}
	if !ok {
		return nil, nil
	}
	owners, err := c.owners(parent.Name)
	if err != nil {
		return nil, err
	}
	return &meta.ParentPlacement{Partitions: parent.Partitions, Owners: owners}, nil
}

// assign proposes one insert-only placement. A row that appeared meanwhile,
// or a topic gone or recreated since the read, is not an error.
func (c *Controller) assign(ctx context.Context, t meta.Topic, p int32, owner string) error {
	ev := &meta.AssignPartitionIfAbsent{Topic: t.Name, TopicID: t.ID, Partition: p, Owner: owner}
	applied, err := c.store.Propose(ctx, c.envelope(ev))
	if err != nil {
		return fmt.Errorf("controller: assign %s/%d: %w", t.Name, p, err)
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		c.log.Info("controller: partition assigned", slog.String("topic", t.Name),
			slog.Int("partition", int(p)), slog.String("owner", owner))
	case meta.CodeExists, meta.CodeNotFound, meta.CodeConflict:
	default:
		c.log.Warn("controller: placement refused", slog.String("topic", t.Name),
			slog.Int("partition", int(p)), slog.String("owner", owner), slog.Any("error", applied.Result.Err()))
	}
	return nil
}

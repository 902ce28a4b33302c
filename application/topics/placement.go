package topics

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain/meta"
)

// placeMissing assigns every unassigned partition of topic t, when this node
// leads the metadata shard (internals.md §8.6-8.7: leader + barrier + the
// assignment lock, insert-only entries). The owner comes from the shared
// rule, meta.PlaceOwner: alive, non-draining members sorted by id, partition
// p on member p mod n, a fan-out child's partition anti-affine to its
// parent's. With no such member, or on a follower, the partitions stay
// unassigned for the controller to place.
func (s *Service) placeMissing(ctx context.Context, t meta.Topic) error {
	s.place.Lock()
	defer s.place.Unlock()
	if err := s.store.Barrier(ctx); err != nil {
		return fmt.Errorf("topics: place %q: barrier: %w", t.Name, err)
	}
	if !s.store.IsLeader() {
		return nil
	}
	cur, ok, err := s.store.Topic(t.Name)
	if err != nil || !ok || cur.ID != t.ID || cur.ID == "" {
		// Gone or recreated meanwhile: not ours to place. A topic older
		// than incarnation ids is left to the controller's legacy path.
		return err
	}
	members, err := s.store.Members()
	if err != nil {
		return fmt.Errorf("topics: read members: %w", err)
	}
	candidates := meta.PlacementCandidates(members)
	if len(candidates) == 0 {
		return nil
	}
	parent, err := s.parentPlacement(cur)
	if err != nil {
		return err
	}
	missing, err := s.unassigned(cur)
	if err != nil {
		return err
	}
	for _, p := range missing {
		owner, ok := meta.PlaceOwner(candidates, p, parent)
		if !ok {
			continue // the parent partition is unplaced: the controller retries
		}
		if err := s.assign(ctx, cur, p, owner); err != nil {
			return err
		}
	}
	return nil
}

// parentPlacement reads the parent placement of a fan-out child (nil for
// any other topic, or a child whose parent record is gone).
func (s *Service) parentPlacement(t meta.Topic) (*meta.ParentPlacement, error) {
	if t.Parent == "" {
		return nil, nil
	}
	parent, ok, err := s.store.Topic(t.Parent)
	if err != nil || !ok {
		return nil, err
	}
	rows, err := s.store.Assignments(parent.Name)
	if err != nil {
		return nil, fmt.Errorf("topics: read assignments of parent %q: %w", parent.Name, err)
	}
	pl := &meta.ParentPlacement{Partitions: parent.Partitions, Owners: make(map[int32]string, len(rows))}
	for _, r := range rows {
		pl.Owners[r.Partition] = r.Owner
	}
	return pl, nil
}

// unassigned lists the partitions of t that have no assignment row.
func (s *Service) unassigned(t meta.Topic) ([]int32, error) {
	rows, err := s.store.Assignments(t.Name)
	if err != nil {
		return nil, fmt.Errorf("topics: read assignments of %q: %w", t.Name, err)
	}
	placed := make(map[int32]bool, len(rows))
	for _, r := range rows {
		placed[r.Partition] = true
	}
	var out []int32
	for p := int32(0); p < t.Partitions; p++ {
		if !placed[p] {
			out = append(out, p)
		}
	}
	return out, nil
}

// assign proposes one insert-only placement. A row that appeared meanwhile
// is fine; a topic gone or recreated ends placement quietly.
func (s *Service) assign(ctx context.Context, t meta.Topic, p int32, owner string) error {
	ev := &meta.AssignPartitionIfAbsent{Topic: t.Name, TopicID: t.ID, Partition: p, Owner: owner}
	applied, err := s.store.Propose(ctx, s.envelope("node:"+s.self, ev))
	if err != nil {
		return fmt.Errorf("topics: assign %s/%d: %w", t.Name, p, err)
	}
	switch applied.Result.Code {
	case meta.CodeOK, meta.CodeExists, meta.CodeNotFound, meta.CodeConflict:
		return nil
	}
	return fmt.Errorf("topics: assign %s/%d to %s: %w", t.Name, p, owner, applied.Result.Err())
}

package topics

import (
	"context"
	"fmt"
	"slices"

	"github.com/narad/narad/domain/meta"
)

// placeMissing assigns every unassigned partition of topic t, when this node
// leads the metadata shard (internals.md §8.6-8.7: leader + barrier + the
// assignment lock, insert-only entries). Alive, non-draining members sorted
// by id take partition p on member p mod n. With no such member, or on a
// follower, the partitions stay unassigned for the controller to place.
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
	members, err := s.placementMembers()
	if err != nil || len(members) == 0 {
		return err
	}
	missing, err := s.unassigned(cur)
	if err != nil {
		return err
	}
	for _, p := range missing {
		owner := members[int(p)%len(members)]
		if err := s.assign(ctx, cur, p, owner); err != nil {
			return err
		}
	}
	return nil
}

// placementMembers returns the ids of alive, non-draining members, sorted.
func (s *Service) placementMembers() ([]string, error) {
	all, err := s.store.Members()
	if err != nil {
		return nil, fmt.Errorf("topics: read members: %w", err)
	}
	var ids []string
	for _, m := range all {
		if m.Status == meta.StatusAlive && !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	slices.Sort(ids)
	return ids, nil
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
	applied, err := s.store.Propose(ctx, s.envelope(ev))
	if err != nil {
		return fmt.Errorf("topics: assign %s/%d: %w", t.Name, p, err)
	}
	switch applied.Result.Code {
	case meta.CodeOK, meta.CodeExists, meta.CodeNotFound, meta.CodeConflict:
		return nil
	}
	return fmt.Errorf("topics: assign %s/%d to %s: %w", t.Name, p, owner, applied.Result.Err())
}

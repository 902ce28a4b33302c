package remotes

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Bounds reads the log statistics of partitions this node owns.
type Bounds interface {
	LogStats(ref domain.PartitionRef) (ports.LogStats, error)
}

// Frontiers reads, per partition, the first offset the parent's consumers
// have not settled: locally when node is this one, from the owner
// otherwise.
type Frontiers interface {
	Unconsumed(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]int64, error)
}

// startOffsets resolves a link's start on every parent partition
// (internals.md §7.1 `from`): the committed high watermark (attach), the
// oldest retained record (earliest) or the consumers' frontier
// (unconsumed), each asked of the partition's owner. An unassigned
// partition has taken no record: it starts at 0.
func (s *Service) startOffsets(ctx context.Context, parent meta.Topic, from string) ([]int64, error) {
	rows, err := s.d.Store.Assignments(parent.Name)
	if err != nil {
		return nil, readFailure(err)
	}
	byOwner := map[string][]int32{}
	for _, r := range rows {
		if r.Partition >= 0 && r.Partition < parent.Partitions && r.BelongsTo(parent.ID) && r.Owner != "" {
			byOwner[r.Owner] = append(byOwner[r.Owner], r.Partition)
		}
	}
	out := make([]int64, parent.Partitions)
	for owner, parts := range byOwner {
		got, err := s.ownerStarts(ctx, parent, owner, parts, from)
		if err != nil {
			return nil, domain.Refuse(domain.ErrUnavailable, fmt.Sprintf(
				"the start offsets of %s could not be read from node %s, nothing was linked: %v", parent.Name, owner, err))
		}
		for i, p := range parts {
			out[p] = got[i]
		}
	}
	return out, nil
}

// ownerStarts asks one owner for the starts of parts.
func (s *Service) ownerStarts(ctx context.Context, parent meta.Topic, owner string, parts []int32, from string) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, memberCheckTimeout)
	defer cancel()
	id := domain.TopicID(parent.ID)
	if from == meta.RemoteFromUnconsumed {
		if s.d.Frontiers == nil {
			return nil, fmt.Errorf("this node cannot read consumer frontiers")
		}
		return s.d.Frontiers.Unconsumed(ctx, owner, parent.Name, id, parts)
	}
	stats, err := s.ownerStats(ctx, parent, owner, parts)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(parts))
	for i, st := range stats {
		out[i] = st.HighWatermark
		if from == meta.RemoteFromEarliest {
			out[i] = st.OldestOffset
		}
	}
	return out, nil
}

func (s *Service) ownerStats(ctx context.Context, parent meta.Topic, owner string, parts []int32) ([]ports.LogStats, error) {
	if owner != s.o.Self {
		if s.d.PeerStats == nil {
			return nil, fmt.Errorf("owner %s cannot be asked from this node", owner)
		}
		stats, err := s.d.PeerStats.PartitionStats(ctx, owner, parent.Name, domain.TopicID(parent.ID), parts)
		if err == nil && len(stats) != len(parts) {
			err = fmt.Errorf("owner %s answered %d statistics for %d partitions", owner, len(stats), len(parts))
		}
		return stats, err
	}
	if s.d.Bounds == nil {
		return nil, fmt.Errorf("this node cannot read its logs")
	}
	out := make([]ports.LogStats, len(parts))
	for i, p := range parts {
		st, err := s.d.Bounds.LogStats(domain.PartitionRef{Topic: parent.Name, TopicID: domain.TopicID(parent.ID), Partition: p})
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

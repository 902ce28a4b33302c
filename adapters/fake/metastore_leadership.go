package fake

import (
	"context"
	"fmt"
	"slices"

	"github.com/narad/narad/domain/meta"
)

// handover is what TransferLeadership records and how it fails.
type handover struct {
	targets []uint64
	err     error
}

// SetReplicaID sets this replica's id (1 by default).
func (s *MetaStore) SetReplicaID(id uint64) { s.set(func() { s.self = id }) }

// ReplicaID is this replica's id in the shard.
func (s *MetaStore) ReplicaID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.self
}

// FailTransfer makes TransferLeadership return err and keep the leadership
// (nil restores hand-overs).
func (s *MetaStore) FailTransfer(err error) { s.set(func() { s.handover.err = err }) }

// Transfers returns the targets TransferLeadership was asked for, in order.
func (s *MetaStore) Transfers() []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.handover.targets)
}

// TransferLeadership records the request and, like a completed Raft
// transfer, leaves this replica a follower. It refuses a target that is
// not another voter, and fails on a follower or after FailTransfer.
func (s *MetaStore) TransferLeadership(_ context.Context, replicaID uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handover.targets = append(s.handover.targets, replicaID)
	_, voter := s.membership.Voters[replicaID]
	switch {
	case s.closed:
		return fmt.Errorf("fake metastore: %w", meta.ErrStopped)
	case !s.leader:
		return fmt.Errorf("fake metastore: leadership transfer on a follower: %w", meta.ErrUnavailable)
	case !voter || replicaID == s.self:
		return fmt.Errorf("fake metastore: transfer to %d, not another voter: %w", replicaID, meta.ErrRefused)
	case s.handover.err != nil:
		return s.handover.err
	}
	s.leader = false
	return nil
}

package metastore

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain/meta"
)

// TransferLeadership asks Raft to hand this replica's leadership to the
// voter replicaID and returns once a leader is known in a later term than
// the one this replica led: a leader of a new term starts every follower's
// match index at 0, which is what a voter rejoining with an empty log needs
// (application/membership handover.go). Any new term will do, whoever won
// it. Raft gives a transfer up after one election timeout (the target did
// not catch up in time), so ctx bounds the wait.
func (s *Store) TransferLeadership(ctx context.Context, replicaID uint64) error {
	leader, term, valid, err := s.host.nh.GetLeaderID(s.shardID)
	switch {
	case err != nil:
		return raftErr("leader transfer", err)
	case !valid || leader != s.replicaID:
		return fmt.Errorf("metastore: leader transfer to %d: this replica does not lead: %w", replicaID, meta.ErrUnavailable)
	case replicaID == s.replicaID:
		return fmt.Errorf("metastore: leader transfer to itself: %w", meta.ErrRefused)
	}
	if err := s.host.nh.RequestLeaderTransfer(s.shardID, replicaID); err != nil {
		return raftErr(fmt.Sprintf("leader transfer to %d", replicaID), err)
	}
	for {
		_, now, valid, err := s.host.nh.GetLeaderID(s.shardID)
		switch {
		case err != nil:
			return raftErr("leader transfer", err)
		case valid && now > term:
			return nil
		case !pause(ctx, leaderPollInterval):
			return fmt.Errorf("metastore: leader transfer to %d: no leader of a later term than %d: %w (%w)",
				replicaID, term, meta.ErrUnavailable, ctx.Err())
		}
	}
}

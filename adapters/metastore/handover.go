package metastore

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain/meta"
)

// TransferLeadership asks Raft to hand this replica's leadership to the
// voter replicaID and returns once a leader is known in a later term than
// the one this replica led: a leader of a new term starts every follower's
// match index at 0, which is what a voter rejoining with an empty log needs
// (application/membership handover.go). Any new term will do, whoever won
// it. ctx bounds the wait.
//
// The request is repeated every election timeout until then: Raft gives a
// transfer up silently after one election timeout, and the target skips
// the campaign it was told to start while it has committed entries it has
// not applied yet (a configuration change among them could otherwise let a
// smaller quorum elect it), which the entries of a busy shard often make
// it.
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
	again := s.host.cfg.RTT * time.Duration(electionRTTTicks)
	var asked time.Time
	for {
		id, now, valid, err := s.host.nh.GetLeaderID(s.shardID)
		switch {
		case err != nil:
			return raftErr("leader transfer", err)
		case valid && now > term:
			return nil
		case valid && id == s.replicaID && now == term && time.Since(asked) >= again:
			// still leading the same term: (again) ask; a follower would
			// forward the request to whoever leads now
			asked = time.Now()
			if err := s.host.nh.RequestLeaderTransfer(s.shardID, replicaID); err != nil {
				return raftErr(fmt.Sprintf("leader transfer to %d", replicaID), err)
			}
		}
		if !pause(ctx, leaderPollInterval) {
			return fmt.Errorf("metastore: leader transfer to %d: no leader of a later term than %d: %w (%w)",
				replicaID, term, meta.ErrUnavailable, ctx.Err())
		}
	}
}

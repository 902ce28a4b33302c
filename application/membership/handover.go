package membership

import (
	"context"
	"log/slog"
	"slices"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// handOver runs when a voter already in the configuration joins from an
// empty data directory (internals §9.2, §9.3). The leader still holds the
// match index it had for the voter before the wipe, and its heartbeats
// carry commit = min(match, committed): a replica with an empty log cannot
// commit that far, and Raft stops it with a panic. A leader elected after
// the wipe starts every follower's match at 0, so the leader hands the
// leadership to another voter before answering, and answers only once the
// hand-over completed (the joiner starts its replica on the answer).
//
// It hands over only when all of these hold:
//   - the voter has a member record: it ran before. A late initial member
//     of a brand-new install has none yet and was never replicated to;
//   - this leader has led for 12 s (the promotion tenure rule): a fresh
//     leader's match indexes started at 0 already, and this keeps two
//     joins from bouncing the leadership back and forth;
//   - another voter, neither this one nor the joiner, is healthy: its
//     member record is alive and the Raft link to it is not failing.
//
// Otherwise, and when the hand-over does not complete in time, the join
// is still answered "voter"; the rejoining replica may then stop once and
// come back after a leadership change.
func (a *Admitter) handOver(ctx context.Context, j Join, id uint64, m ports.RaftMembership) error {
	if !j.DataDirEmpty {
		return nil
	}
	members, err := a.store.Members()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(members, func(mb meta.Member) bool { return mb.ID == j.NodeID }) {
		return nil
	}
	if !a.ledLongEnough() {
		return nil
	}
	target, ok := a.handOverTarget(m, members, id)
	if !ok {
		a.log.Warn("a voter rejoined with an empty data directory and no other healthy voter can take the leadership; it may restart once",
			slog.String("node", j.NodeID))
		return nil
	}
	a.log.Warn("a voter rejoined with an empty data directory: handing leadership over so it can catch up from scratch",
		slog.String("node", j.NodeID), slog.String("target", target.ID), slog.Uint64("target_replica", meta.ReplicaID(target.ID)))
	ctx, cancel := context.WithTimeout(ctx, handOverWaitMax)
	defer cancel()
	if err := a.store.TransferLeadership(ctx, meta.ReplicaID(target.ID)); err != nil {
		a.log.Warn("the leadership hand-over did not complete; the rejoining voter may restart once",
			slog.String("node", j.NodeID), slog.String("target", target.ID), slog.Any("error", err))
	}
	return nil
}

// handOverTarget picks the voter to hand the leadership to: one of the
// configuration's voters other than this leader and the joiner, whose
// member record is alive and not draining and whose Raft link is not
// failing; the lowest replica id among them, so the choice is stable.
func (a *Admitter) handOverTarget(m ports.RaftMembership, members []meta.Member, joiner uint64) (meta.Member, bool) {
	self := a.store.ReplicaID()
	var best meta.Member
	found := false
	for _, mb := range members {
		rid := meta.ReplicaID(mb.ID)
		addr, voter := m.Voters[rid]
		switch {
		case !voter, rid == self, rid == joiner:
		case mb.Status != meta.StatusAlive, mb.Draining, a.linkFailing(addr):
		case !found || rid < meta.ReplicaID(best.ID):
			best, found = mb, true
		}
	}
	return best, found
}

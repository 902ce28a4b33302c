package membership

import (
	"fmt"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/rebalance"
	"github.com/narad/narad/ports"
)

// Blocker codes of a draining member that stays (api.md §2.17
// decommission_blocked), beyond the refusal reasons.
const (
	BlockedMoveTarget      = "move_target"
	BlockedDispatchBacklog = "dispatch_backlog"
	BlockedNodeStatus      = "node_status_unavailable"
	BlockedLeaderTransfer  = "leader_transfer"
)

// drainBlockers is what keeps draining member m in the cluster, read from
// the replica: the quorum rules, partitions it owns that cannot leave it,
// moves still aimed at it, and the leadership it must hand on first. The
// dispatch backlog needs the member's own status (detailBlockers).
func drainBlockers(m meta.Member, members []meta.Member, cfg ports.RaftMembership, counts placementCounts, leads bool) []Reason {
	var out []Reason
	rid := meta.ReplicaID(m.ID)
	if _, voter := cfg.Voters[rid]; voter {
		if len(cfg.Voters)-1 < rebalance.MinVoters {
			out = append(out, Reason{ReasonBelowMinVoters, fmt.Sprintf(
				"%d voters would remain; at least %d must", len(cfg.Voters)-1, rebalance.MinVoters)})
		}
		if leads {
			out = append(out, Reason{BlockedLeaderTransfer, m.ID + " leads the metadata shard: it hands the leadership on before it leaves"})
		}
	}
	out = append(out, ownerReasons(m, members, counts.owned[m.ID])...)
	if n := counts.inbound[m.ID]; n > 0 {
		out = append(out, Reason{BlockedMoveTarget, fmt.Sprintf("%d partition moves still target %s", n, m.ID)})
	}
	return out
}

// detailBlockers adds what the member's own status says: accepted records
// not yet handed to their owners, or no status at all.
func detailBlockers(v MemberView) []Reason {
	if !v.Draining {
		return nil
	}
	switch {
	case v.NodeStatus == nil:
		return []Reason{{BlockedNodeStatus, "its status could not be read: " + v.StatusError}}
	case v.NodeStatus.DispatchBacklog > 0:
		return []Reason{{BlockedDispatchBacklog, fmt.Sprintf(
			"%d accepted records are not yet handed to their owners", v.NodeStatus.DispatchBacklog)}}
	}
	return nil
}

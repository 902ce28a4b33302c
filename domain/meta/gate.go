package meta

import (
	"fmt"
	"sort"
)

// The entry-type gate (internals §8.3 "Proposing"). Types 1..LegacyNewestType
// are applied by every release and always pass. A newer type is proposed
// only when every server of the Raft configuration (voters and non-voters)
// and every member record (alive, dead or draining) reports applying it. A
// server without a member record holds every newer type back until it
// registers or is removed. The leader counts as its own release, whatever
// its member record says.

// Holder names who holds a type back.
type Holder struct {
	// MemberID is the member's id; empty for a Raft server without a member
	// record (ReplicaID names it then).
	MemberID  string
	ReplicaID uint64
	// Applies is the newest type the holder reports (LegacyNewestType for a
	// report-less record or a record-less server).
	Applies EntryType
}

func (h Holder) String() string {
	if h.MemberID == "" {
		return fmt.Sprintf("raft server %d (no member record)", h.ReplicaID)
	}
	return fmt.Sprintf("member %q (applies through type %d)", h.MemberID, h.Applies)
}

// Gate is one decision point's view of the cluster's releases. Build it
// from fresh reads (after a barrier on the leader) with NewGate; a Gate is
// immutable and safe to share.
type Gate struct {
	holders []Holder // every server and member but the leader, lowest report first
	self    Holder   // the leader, as its own build reports
}

// NewGate builds the gate as seen by the leader selfID, whose own build
// applies through selfApplies. members are every member record; servers are
// the replica ids of every voter and non-voter.
func NewGate(selfID string, selfApplies EntryType, members []Member, servers []uint64) Gate {
	g := Gate{self: Holder{MemberID: selfID, ReplicaID: ReplicaID(selfID), Applies: reported(selfApplies)}}
	seen := map[uint64]bool{g.self.ReplicaID: true}
	for _, m := range members {
		rid := ReplicaID(m.ID)
		if !seen[rid] {
			seen[rid] = true
			g.holders = append(g.holders, Holder{MemberID: m.ID, ReplicaID: rid, Applies: reported(m.EntryTypes)})
		}
	}
	for _, rid := range servers {
		if !seen[rid] {
			seen[rid] = true
			g.holders = append(g.holders, Holder{ReplicaID: rid, Applies: LegacyNewestType})
		}
	}
	sort.Slice(g.holders, func(i, j int) bool {
		a, b := g.holders[i], g.holders[j]
		if a.Applies != b.Applies {
			return a.Applies < b.Applies
		}
		if a.MemberID != b.MemberID {
			return a.MemberID < b.MemberID
		}
		return a.ReplicaID < b.ReplicaID
	})
	return g
}

// ReportedNewest maps a node's entry-type report to the newest type it
// stands for: no report (0, a v3.0.x node) means the legacy set.
func ReportedNewest(t EntryType) EntryType { return max(t, LegacyNewestType) }

func reported(t EntryType) EntryType { return ReportedNewest(t) }

// Newest is the newest type the whole cluster applies: every type up to it
// may be proposed.
func (g Gate) Newest() EntryType {
	if len(g.holders) > 0 && g.holders[0].Applies < g.self.Applies {
		return g.holders[0].Applies
	}
	return g.self.Applies
}

// Allows reports whether t may be proposed. When it may not, the Holder
// names who holds it back: the lowest report (ties: record-less servers
// first, then by member id), or the leader itself when only its own build
// lacks t.
func (g Gate) Allows(t EntryType) (bool, Holder) {
	if t <= g.Newest() {
		return true, Holder{}
	}
	if len(g.holders) > 0 && g.holders[0].Applies < t {
		return false, g.holders[0]
	}
	return false, g.self
}

package membership

import (
	"context"
	"fmt"
	"sort"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// RosterStore is what the members listing reads: the member table, every
// topic's placement, the Raft configuration and the leader.
type RosterStore interface {
	Members() ([]meta.Member, error)
	ListTopics(after string, limit int) ([]meta.Topic, error)
	Assignments(topic string) ([]meta.Assignment, error)
	Membership(ctx context.Context) (ports.RaftMembership, error)
	Leader() (replicaID uint64, ok bool)
}

// MemberView is one member as GET /v1/cluster/members shows it (api.md
// §2.17).
type MemberView struct {
	ID                  string
	Addr                string
	Status              string
	Draining            bool
	OwnedPartitions     int
	OutboundMoves       int
	Voter               bool
	Leader              bool
	HeartbeatAgeSeconds int64
	// DecommissionBlocked says, for a draining member, what keeps it in
	// the cluster now; empty when nothing does.
	DecommissionBlocked []Reason
	// NodeStatus is the member's own report (ListDetail only); nil when it
	// could not be read, and then StatusError says why.
	NodeStatus  *ports.NodeStatus
	StatusError string
}

// Roster lists the members. Safe for concurrent use.
type Roster struct {
	store  RosterStore
	clock  ports.Clock
	status *StatusSources // nil: detail listings report it unavailable
}

// NewRoster returns a Roster; it panics on a nil dependency.
func NewRoster(store RosterStore, clock ports.Clock) *Roster {
	if store == nil || clock == nil {
		panic("membership: roster needs a store and a clock")
	}
	return &Roster{store: store, clock: clock}
}

// List returns every member record, dead ones included, sorted by id, with
// its placement counts from the local replica and its voter and leader
// flags from the Raft configuration. Errors: domain.ErrUnavailable when the
// configuration cannot be read (no leader), or a store error.
func (r *Roster) List(ctx context.Context) ([]MemberView, error) {
	members, err := r.store.Members()
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	counts, err := countPlacement(r.store)
	if err != nil {
		return nil, fmt.Errorf("members: %w", err)
	}
	cfg, err := r.store.Membership(ctx)
	if err != nil {
		return nil, fmt.Errorf("members: raft configuration: %w: %w", domain.ErrUnavailable, err)
	}
	leader, hasLeader := r.store.Leader()
	now := r.clock.Now().Unix()
	out := make([]MemberView, 0, len(members))
	for _, m := range members {
		rid := meta.ReplicaID(m.ID)
		_, voter := cfg.Voters[rid]
		out = append(out, MemberView{
			ID: m.ID, Addr: m.Addr, Status: m.Status, Draining: m.Draining,
			OwnedPartitions: counts.owned[m.ID], OutboundMoves: counts.outbound[m.ID],
			Voter: voter, Leader: hasLeader && leader == rid,
			HeartbeatAgeSeconds: max(0, now-m.LastHeartbeat),
		})
		if m.Draining {
			v := &out[len(out)-1]
			v.DecommissionBlocked = drainBlockers(m, members, cfg, counts, v.Leader)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

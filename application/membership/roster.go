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
}

// Roster lists the members. Safe for concurrent use.
type Roster struct {
	store RosterStore
	clock ports.Clock
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
	owned, moving, err := r.placement()
	if err != nil {
		return nil, err
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
			OwnedPartitions: owned[m.ID], OutboundMoves: moving[m.ID],
			Voter: voter, Leader: hasLeader && leader == rid,
			HeartbeatAgeSeconds: max(0, now-m.LastHeartbeat),
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// placement counts each node's owned partitions and, of those, the ones
// with a move target.
func (r *Roster) placement() (owned, moving map[string]int, err error) {
	topics, err := r.store.ListTopics("", 0)
	if err != nil {
		return nil, nil, fmt.Errorf("members: topics: %w", err)
	}
	owned, moving = map[string]int{}, map[string]int{}
	for _, t := range topics {
		rows, err := r.store.Assignments(t.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("members: placement of %s: %w", t.Name, err)
		}
		for _, a := range rows {
			if a.Partition >= int32(t.Partitions) {
				continue // an orphan row the controller prunes
			}
			owned[a.Owner]++
			if a.Target != "" {
				moving[a.Owner]++
			}
		}
	}
	return owned, moving, nil
}

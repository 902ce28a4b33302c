package membership

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ForgetStore is what forgetting a Raft server reads and changes.
type ForgetStore interface {
	RosterStore
	ports.MetadataMembership
	// LeaderSince reports since when this replica has led (false while it
	// does not lead).
	LeaderSince() (time.Time, bool)
}

// Forgotten is the answer to a forget.
type Forgotten struct {
	ID    string
	Voter bool
}

// Forgetter drops Raft servers that have no member record (api.md §2.17,
// internals.md §9.5 ForgetServer). Safe for concurrent use.
type Forgetter struct {
	store ForgetStore
	clock ports.Clock
}

// NewForgetter returns a Forgetter; it panics on a nil dependency.
func NewForgetter(store ForgetStore, clock ports.Clock) *Forgetter {
	if store == nil || clock == nil {
		panic("membership: forgetter needs a store and a clock")
	}
	return &Forgetter{store: store, clock: clock}
}

// Forget removes the Raft server id from the configuration. It refuses the
// leader itself (domain.ErrInvalidArgument), an id no server has
// (domain.ErrMemberNotFound), a server with a member record or named by a
// partition assignment, and a voter whose removal could leave the voters
// without a quorum (domain.ErrConflict).
func (f *Forgetter) Forget(ctx context.Context, id string) (Forgotten, error) {
	cfg, err := f.store.Membership(ctx)
	if err != nil {
		return Forgotten{}, domain.Refuse(domain.ErrUnavailable, "raft configuration unavailable: "+err.Error())
	}
	rid := meta.ReplicaID(id)
	_, voter := cfg.Voters[rid]
	_, nonVoter := cfg.NonVoters[rid]
	if leader, ok := f.store.Leader(); ok && leader == rid {
		return Forgotten{}, domain.Refuse(domain.ErrInvalidArgument, id+" is the leader: it cannot be forgotten")
	}
	if !voter && !nonVoter {
		return Forgotten{}, domain.ErrMemberNotFound
	}
	if err := f.unplaced(id); err != nil {
		return Forgotten{}, err
	}
	if voter {
		if err := f.quorumWithout(rid, cfg); err != nil {
			return Forgotten{}, err
		}
	}
	if err := f.store.RemoveReplica(ctx, rid); err != nil {
		return Forgotten{}, domain.Refuse(domain.ErrUnavailable, "remove the raft server: "+err.Error())
	}
	return Forgotten{ID: id, Voter: voter}, nil
}

// unplaced refuses a server with a member record or named by a placement.
func (f *Forgetter) unplaced(id string) error {
	members, err := f.store.Members()
	if err != nil {
		return readFailure(err)
	}
	if _, ok := findMember(members, id); ok {
		return domain.Refuse(domain.ErrConflict, id+" has a member record: decommission it instead")
	}
	counts, err := countPlacement(f.store)
	if err != nil {
		return readFailure(err)
	}
	if counts.owned[id] > 0 || counts.inbound[id] > 0 {
		return domain.Refuse(domain.ErrConflict, id+" is named by a partition assignment")
	}
	return nil
}

// quorumWithout refuses removing voter rid unless the other voters with an
// alive member record form a quorum of the voters left, and, on the
// leader, it has led for the promotion tenure (internals.md §9.3: before
// that its view of its followers is not yet trustworthy).
func (f *Forgetter) quorumWithout(rid uint64, cfg ports.RaftMembership) error {
	members, err := f.store.Members()
	if err != nil {
		return readFailure(err)
	}
	alive := map[uint64]bool{}
	for _, m := range members {
		if m.Status == meta.StatusAlive {
			alive[meta.ReplicaID(m.ID)] = true
		}
	}
	left, up := 0, 0
	for v := range cfg.Voters {
		if v == rid {
			continue
		}
		left++
		if alive[v] {
			up++
		}
	}
	if up < left/2+1 {
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf(
			"removing this voter could leave the voters without a quorum: %d of the %d remaining are alive", up, left))
	}
	if since, leads := f.store.LeaderSince(); leads && f.clock.Now().Sub(since) < promotionLeaderTenureMin {
		return domain.Refuse(domain.ErrConflict, fmt.Sprintf(
			"the leader has led for less than %s; retry shortly", promotionLeaderTenureMin))
	}
	return nil
}

package membership

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// DeskStore is what answering a join needs beyond admission: who leads,
// to name the leader to a joiner that asked elsewhere, and whether this
// node belongs to a Raft configuration at all.
type DeskStore interface {
	Store
	// Leader returns the leader's replica id as known locally.
	Leader() (replicaID uint64, ok bool)
	// Admitted is false only while this node is itself a join-only replica
	// waiting to be added (no evidence of a cluster).
	Admitted() bool
}

var _ ports.JoinAnswerer = (*Desk)(nil)

// Desk answers JoinCluster requests arriving at this node (internals §9.3):
// the leader admits through the Admitter, one join at a time; a configured
// non-leader names the leader it knows (421); a node that is itself
// waiting to be admitted says it knows no cluster (412). Refusals come back
// as the domain errors ports.ClusterJoiner lists. Safe for concurrent use.
type Desk struct {
	store DeskStore
	admit *Admitter
	mu    sync.Mutex // one admission at a time
}

// NewDesk returns a Desk; it panics on a nil dependency.
func NewDesk(store DeskStore, admit *Admitter) *Desk {
	switch {
	case store == nil:
		panic("membership: nil desk store")
	case admit == nil:
		panic("membership: nil admitter")
	}
	return &Desk{store: store, admit: admit}
}

// AnswerJoin answers req (ports.JoinAnswerer).
func (d *Desk) AnswerJoin(ctx context.Context, req ports.JoinRequest) (ports.JoinAdmission, error) {
	if !d.store.Admitted() {
		return ports.JoinAdmission{}, fmt.Errorf("join %q: this node is waiting to be admitted itself: %w", req.NodeID, domain.ErrNoCluster)
	}
	d.mu.Lock()
	dec, err := d.admit.Admit(ctx, Join{NodeID: req.NodeID, RaftAddr: req.RaftAddr, EntryTypes: req.EntryTypes, DataDirEmpty: req.DataDirEmpty})
	d.mu.Unlock()
	if err != nil {
		return ports.JoinAdmission{}, d.refusal(req, err)
	}
	return ports.JoinAdmission{Status: string(dec.Status), Reason: dec.Reason}, nil
}

// refusal maps an admission error onto the join's domain errors.
func (d *Desk) refusal(req ports.JoinRequest, err error) error {
	switch {
	case errors.Is(err, ErrNotLeader):
		return d.notLeader()
	case errors.Is(err, ErrRemoved):
		return fmt.Errorf("%w: %w", domain.ErrJoinTombstoned, err)
	case errors.Is(err, ErrOlderRelease):
		return fmt.Errorf("%w: %w", domain.ErrOlderRelease, err)
	case errors.Is(err, ErrBadRequest):
		return domain.Refuse(domain.ErrInvalidArgument, "join needs a node id and a raft address")
	}
	return fmt.Errorf("join %q: %w: %w", req.NodeID, domain.ErrUnavailable, err)
}

// notLeader names the leader this node knows: its member id and node-RPC
// address from the member table (empty when unknown or unregistered).
func (d *Desk) notLeader() error {
	leader, ok := d.store.Leader()
	if !ok {
		return &domain.NotLeaderError{}
	}
	members, err := d.store.Members()
	if err != nil {
		return &domain.NotLeaderError{}
	}
	for _, m := range members {
		if meta.ReplicaID(m.ID) == leader {
			return &domain.NotLeaderError{LeaderID: m.ID, LeaderAddr: m.Addr}
		}
	}
	return &domain.NotLeaderError{}
}

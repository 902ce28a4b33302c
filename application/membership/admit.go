package membership

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Sentinel errors.
var (
	// ErrNotLeader: only the leader admits; the caller answers 421 naming
	// the leader it knows.
	ErrNotLeader = errors.New("membership: not the metadata leader")
	// ErrRemoved: the replica id was removed for good (Raft never takes a
	// removed id back); the joiner answers 409.
	ErrRemoved = errors.New("membership: replica removed from the cluster")
	// ErrBadRequest: a join without a node id or Raft address.
	ErrBadRequest = errors.New("membership: bad join request")
)

// Status is how a node entered (or stays in) the shard, as the join answer
// names it.
type Status string

// Join answers.
const (
	// StatusVoter: the node is a voter (added now, or already one).
	StatusVoter Status = "voter"
	// StatusPromoted: a staged non-voter became a voter.
	StatusPromoted Status = "promoted"
	// StatusStaged: the node was added as a non-voter.
	StatusStaged Status = "staged"
	// StatusDeferred: the node stays a non-voter; the voter set is full.
	StatusDeferred Status = "deferred"
)

// Join is one node's request to enter the metadata shard.
type Join struct {
	NodeID   string
	RaftAddr string
}

// Store is what admission needs: the Raft configuration and leadership.
type Store interface {
	ports.MetadataMembership
	IsLeader() bool
}

// Admitter decides admissions. Safe for concurrent use; callers serialize
// joins (one configuration change at a time is Raft's rule anyway).
type Admitter struct {
	store     Store
	maxVoters int
}

// NewAdmitter returns an Admitter growing the shard to maxVoters voters (3
// or 5). It panics on a nil store or another voter count.
func NewAdmitter(store Store, maxVoters int) *Admitter {
	if store == nil {
		panic("membership: nil store")
	}
	if maxVoters != DefaultMaxVoters && maxVoters != LargeMaxVoters {
		panic(fmt.Sprintf("membership: max voters %d is neither 3 nor 5", maxVoters))
	}
	return &Admitter{store: store, maxVoters: maxVoters}
}

// Admit enters j into the shard: as a voter while voters < maxVoters, else
// as a non-voter. A node already in the configuration is answered as it
// stands (a staged one is promoted when room opened), so a lost answer is
// safe to retry. The joiner starts its replica as a non-voter exactly when
// the answer is staged or deferred.
func (a *Admitter) Admit(ctx context.Context, j Join) (Status, error) {
	if j.NodeID == "" || j.RaftAddr == "" {
		return "", fmt.Errorf("join %q at %q: %w", j.NodeID, j.RaftAddr, ErrBadRequest)
	}
	if !a.store.IsLeader() {
		return "", ErrNotLeader
	}
	m, err := a.store.Membership(ctx)
	if err != nil {
		return "", fmt.Errorf("membership: read configuration: %w", err)
	}
	id := meta.ReplicaID(j.NodeID)
	if _, gone := m.Removed[id]; gone {
		return "", fmt.Errorf("join %q (replica %d): %w", j.NodeID, id, ErrRemoved)
	}
	room := len(m.Voters) < a.maxVoters
	if _, voter := m.Voters[id]; voter {
		return StatusVoter, nil
	}
	if _, staged := m.NonVoters[id]; staged {
		return a.promote(ctx, j, id, room)
	}
	if room {
		return a.result(StatusVoter, j, a.store.AddVoter(ctx, id, j.RaftAddr))
	}
	return a.result(StatusStaged, j, a.store.AddNonVoter(ctx, id, j.RaftAddr))
}

func (a *Admitter) promote(ctx context.Context, j Join, id uint64, room bool) (Status, error) {
	if !room {
		return StatusDeferred, nil
	}
	return a.result(StatusPromoted, j, a.store.AddVoter(ctx, id, j.RaftAddr))
}

func (a *Admitter) result(st Status, j Join, err error) (Status, error) {
	if err != nil {
		return "", fmt.Errorf("membership: admit %q as %s: %w", j.NodeID, st, err)
	}
	return st, nil
}

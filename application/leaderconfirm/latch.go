package leaderconfirm

import (
	"context"
	"sync/atomic"
)

// Freshness is what the latch needs from the replica.
type Freshness interface {
	CaughtUp() bool
	IsLeader() bool
	Barrier(ctx context.Context) error
}

// Latch is the ownership latch (G11): no ownership decision (commit, serve,
// move, sweep) until the replica has caught up with the leader once since
// the process started; a leader also passes a barrier first. Once set it
// never clears: steady-state lag is the move protocol's business. Safe for
// concurrent use.
type Latch struct {
	fresh Freshness
	set   atomic.Bool
}

// NewLatch returns an unset latch over fresh; it panics on nil.
func NewLatch(fresh Freshness) *Latch {
	if fresh == nil {
		panic("leaderconfirm: nil freshness")
	}
	return &Latch{fresh: fresh}
}

// IsSet reports whether the latch is set, without trying to set it: for a
// path that falls back to another when it is not (a produce that commits
// straight into a partition this node owns).
func (l *Latch) IsSet() bool { return l.set.Load() }

// Ready reports whether ownership decisions may be made, setting the latch
// the first time the replica is caught up (and, on the leader, a barrier
// passes). Callers treat false as transient: skip and retry.
func (l *Latch) Ready(ctx context.Context) bool {
	if l.set.Load() {
		return true
	}
	if !l.fresh.CaughtUp() {
		return false
	}
	if l.fresh.IsLeader() {
		ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
		defer cancel()
		if l.fresh.Barrier(ctx) != nil {
			return false
		}
	}
	l.set.Store(true)
	return true
}

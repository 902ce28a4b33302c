package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrNotLeader: a pass found this node is not (or no longer) the metadata
// leader and did nothing.
var ErrNotLeader = errors.New("controller: not the metadata leader")

// AssignmentScanner lists every assignment row, those of deleted topics
// included (meta.AllAssignments over the replica). Orphan pruning needs it:
// ports.MetadataCluster only lists rows under a live topic's name.
type AssignmentScanner interface {
	AllAssignments() ([]meta.Assignment, error)
}

// Store is what the controller needs from the metadata replica.
type Store interface {
	ports.MetadataProposer
	ports.MetadataTopics
	ports.MetadataCluster
	ports.MetadataFreshness
	ports.MetadataMembership
	ports.MetadataWatcher
	AssignmentScanner
}

// Deps are the Controller's dependencies. Every field but PlacementLock is
// required.
type Deps struct {
	Store Store
	Clock ports.Clock
	Log   *slog.Logger
	// Self is this node's member id: the leader counts itself alive and
	// never judges itself.
	Self string
	// PlacementLock is the assignment lock shared with topic creates and
	// partition growth (internals §8.7); nil gives the sweep its own.
	PlacementLock sync.Locker
	// Status asks members for their NodeStatus (op 33); nil leaves
	// drained members in the cluster (retire.go).
	Status ports.PeerStatus
	// Transfer hands the leadership to another voter; nil leaves a
	// drained leader in place.
	Transfer LeaderTransferer
	// MaxInFlightMoves bounds the partition moves the leader keeps in
	// flight (rebalance.MaxInFlightMovesDefault); 0 plans none.
	MaxInFlightMoves int
}

// LeaderTransferer hands the metadata leadership to the voter replicaID.
type LeaderTransferer interface {
	TransferLeadership(ctx context.Context, replicaID uint64) error
}

// Controller runs the leader's duties. Run (or a test calling Tick and
// CheckMembership) drives it from one goroutine; DeadMarkingRefused is safe
// from any goroutine.
type Controller struct {
	store Store
	clock ports.Clock
	log   *slog.Logger
	self  string
	place sync.Locker

	status   ports.PeerStatus
	transfer LeaderTransferer
	maxMoves int

	term    *term
	refused atomic.Bool
}

// term is the state of one leadership term, from its first barrier on.
type term struct {
	started time.Time // after the term's first barrier (monotonic)
	passes  int       // passes run in this term
	// refusing is true while the breaker refuses a streak (log once).
	refusing bool
	// alive is the alive member set the membership watch last saw.
	alive map[string]bool
	// arrival is when a member last turned alive with no sweep since.
	arrival time.Time
	pending bool
	// swept, pruned and rebalanced are the views the last clean sweep,
	// prune and rebalance (nothing to move, no move in flight) read.
	swept, pruned, rebalanced settled
}

// New returns a Controller; it panics on a missing dependency.
func New(d Deps) *Controller {
	switch {
	case d.Store == nil:
		panic("controller: nil store")
	case d.Clock == nil:
		panic("controller: nil clock")
	case d.Log == nil:
		panic("controller: nil logger")
	case d.Self == "":
		panic("controller: empty node id")
	}
	lock := d.PlacementLock
	if lock == nil {
		lock = &sync.Mutex{}
	}
	return &Controller{store: d.Store, clock: d.Clock, log: d.Log, self: d.Self, place: lock, status: d.Status, transfer: d.Transfer,
		maxMoves: d.MaxInFlightMoves}
}

// DeadMarkingRefused reports whether the breaker refused the latest dead
// verdict (the narad_dead_marking_refused gauge).
func (c *Controller) DeadMarkingRefused() bool { return c.refused.Load() }

// Run drives the controller until ctx ends: a pass at once, on promotion
// (looked for every 5 s) and every 10 s while leading; the membership watch
// every 250 ms; the placement of topics created or grown elsewhere as their
// entries apply (nudge.go). Failures are logged and the next tick retries.
func (c *Controller) Run(ctx context.Context) error {
	changes := make(chan []ports.MetaChange)
	if sub, err := c.store.Watch(placementWatchBufferCount); err != nil {
		c.log.Warn("controller: no placement watch; topics created elsewhere wait for a pass", slog.Any("error", err))
	} else {
		ctx, cancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			watchPlacement(ctx, c.store, sub, changes)
		}()
		defer func() { cancel(); <-watched }()
	}
	passes := time.NewTicker(controllerPassInterval)
	defer passes.Stop()
	leader := time.NewTicker(leadershipCheckInterval)
	defer leader.Stop()
	watch := time.NewTicker(membershipWatchInterval)
	defer watch.Stop()
	c.logged(c.Tick(ctx))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-passes.C:
			c.logged(c.Tick(ctx))
		case <-leader.C:
			if c.term == nil && c.store.IsLeader() {
				c.logged(c.Tick(ctx))
			}
		case <-watch.C:
			c.logged(c.CheckMembership(ctx))
		case batch := <-changes:
			c.logged(c.PlaceChanged(ctx, batch))
		}
	}
}

func (c *Controller) logged(err error) {
	if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, context.Canceled) {
		c.log.Warn("controller pass skipped", slog.Any("error", err))
	}
}

// Tick runs one pass: leader check, barrier, re-read, then the assignment
// sweep, dead marking (after the term's grace), the move planner
// (rebalance.go), the removal of drained members (retire.go) and, on the
// term's first
// pass and every 6th after it, orphan pruning. It returns ErrNotLeader when
// this node does not lead, and the barrier's error when the pass was
// skipped; an error of one duty does not stop the others.
func (c *Controller) Tick(ctx context.Context) error {
	if err := c.confirmLeader(ctx); err != nil {
		return err
	}
	c.term.passes++
	now := c.clock.Now()
	alive, aliveErr := c.aliveMembers()
	sweepErr := c.sweep(ctx)
	if aliveErr == nil && sweepErr == nil {
		// The membership watch compares later reads with what this sweep saw.
		c.term.alive, c.term.pending = alive, false
	}
	errs := []error{aliveErr, sweepErr, c.markDead(ctx, now), c.rebalance(ctx), c.retire(ctx)}
	if (c.term.passes-1)%orphanPruneEveryPasses == 0 {
		errs = append(errs, c.prune(ctx))
	}
	return errors.Join(errs...)
}

// confirmLeader checks leadership, passes a barrier and checks again, so
// every read after it is at least as fresh as the leader's commit index.
// The first success of a term starts the term (and its election grace).
func (c *Controller) confirmLeader(ctx context.Context) error {
	if !c.store.IsLeader() {
		c.endTerm()
		return ErrNotLeader
	}
	bctx, cancel := context.WithTimeout(ctx, barrierTimeout)
	defer cancel()
	if err := c.store.Barrier(bctx); err != nil {
		return fmt.Errorf("controller: barrier: %w", err)
	}
	if !c.store.IsLeader() {
		c.endTerm()
		return ErrNotLeader
	}
	if c.term == nil {
		c.term = &term{started: c.clock.Now()}
		c.log.Info("controller: leading the metadata shard; dead marking waits for the election grace",
			slog.Duration("grace", memberDeadAfterDuration))
	}
	return nil
}

// endTerm forgets the term: the next one starts with a barrier and a fresh
// grace.
func (c *Controller) endTerm() {
	if c.term != nil {
		c.log.Info("controller: no longer leading the metadata shard")
	}
	c.term = nil
	c.refused.Store(false)
}

// envelope stamps ev with this node's clock.
func (c *Controller) envelope(ev meta.Event) meta.Envelope {
	return meta.Envelope{Actor: "node:" + c.self, AtMs: c.clock.Now().UnixMilli(), Event: ev}
}

// aliveMembers reads the alive member ids.
func (c *Controller) aliveMembers() (map[string]bool, error) {
	members, err := c.store.Members()
	if err != nil {
		return nil, fmt.Errorf("controller: read members: %w", err)
	}
	alive := make(map[string]bool, len(members))
	for _, m := range members {
		if m.Status == meta.StatusAlive {
			alive[m.ID] = true
		}
	}
	return alive, nil
}

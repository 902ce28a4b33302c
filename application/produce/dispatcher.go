package produce

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// DispatchWAL is the ingress WAL as the dispatcher uses it: durable records
// to read, and the checkpoint to advance.
type DispatchWAL interface {
	ports.IngressReader
	ports.IngressCheckpointer
}

// LocalCommitter commits a batch on this node (a *Committer).
type LocalCommitter interface {
	CommitBatch(ctx context.Context, req ports.CommitRequest) (first int64, err error)
}

// DispatcherDeps are the Dispatcher's ports; every one is required. Self is
// this node's member id: a partition whose assignment names it is local.
type DispatcherDeps struct {
	WAL       DispatchWAL
	Store     Store
	Latch     *leaderconfirm.Latch
	Confirmer *leaderconfirm.Confirmer
	Local     LocalCommitter
	Peers     ports.PeerCommitter
	Clock     ports.Clock
	Log       *slog.Logger
	Self      string
}

// Dispatcher moves durable WAL records to their partition owners
// (internals.md §3.3-3.6): each record is queued on its (topic,
// incarnation, partition) destination, or on a sibling partition's while
// its own reroutes (§3.4), each destination has at most one commit in
// flight, and the WAL checkpoint advances to the first sequence not yet
// committed or discarded. A record leaves the WAL only by a commit
// its owner acknowledged, or by a discard the Raft leader confirmed.
//
// All state below belongs to Run's goroutine; commits and confirmations run
// on their own goroutines and report back on channels.
type Dispatcher struct {
	wal       DispatchWAL
	store     Store
	latch     *leaderconfirm.Latch
	confirmer *leaderconfirm.Confirmer
	local     LocalCommitter
	peers     ports.PeerCommitter
	clock     ports.Clock
	log       *slog.Logger
	self      string

	base   uint64 // first sequence not done: the checkpoint to store
	stored uint64 // last checkpoint stored
	next   uint64 // read frontier
	marks  []mark // marks[i] is the state of sequence base+i
	dests  map[destKey]*dest
	held   int // records on queues or in commits (hung ones included)
	// skipped counts records left in the WAL for a rescan.
	skipped  int
	inflight int // commits counting against commitsInFlightMaxCount
	running  int // destinations whose commit result is not yet settled, hung ones included
	latency  map[string]*ownerLatency
	// busyOwners counts the owners in latency judged busy (BusyOwners).
	busyOwners atomic.Int32
	incarn     incarnations
	rescanDue  bool
	lastRescan time.Time
	pausedTill time.Time
	// wakeAt is when the earliest linger noted by the last pass ends.
	wakeAt time.Time
	passed bool // the last pass ran to its end without pausing
	// sleeping is set while Run waits without the backstop (tests read it).
	sleeping  atomic.Bool
	walClosed bool
	draining  bool

	// spares are the arrays of landed batches, cleared, for queues to
	// grow into instead of allocating (at most spareQueuesMaxCount).
	spares [][]ports.WALEntry

	results  chan []commitResult
	confirms chan confirmResult
	// commitCtx outlives Run's context so the final drain can land the
	// commits in flight; it is cancelled when the drain gives up.
	commitCtx     context.Context
	cancelCommits context.CancelFunc
	wg            sync.WaitGroup
}

// NewDispatcher returns a Dispatcher over d; it panics on a missing
// dependency.
func NewDispatcher(d DispatcherDeps) *Dispatcher {
	switch {
	case d.WAL == nil:
		panic("produce: nil WAL")
	case d.Store == nil:
		panic("produce: nil store")
	case d.Latch == nil:
		panic("produce: nil ownership latch")
	case d.Confirmer == nil:
		panic("produce: nil leader confirmer")
	case d.Local == nil:
		panic("produce: nil local committer")
	case d.Peers == nil:
		panic("produce: nil peer committer")
	case d.Clock == nil:
		panic("produce: nil clock")
	case d.Log == nil:
		panic("produce: nil logger")
	case d.Self == "":
		panic("produce: empty node id")
	}
	return &Dispatcher{
		wal: d.WAL, store: d.Store, latch: d.Latch, confirmer: d.Confirmer, local: d.Local,
		peers: d.Peers, clock: d.Clock, log: d.Log, self: d.Self,
		dests: map[destKey]*dest{}, latency: map[string]*ownerLatency{}, incarn: newIncarnations(),
		results: make(chan []commitResult, commitsInFlightMaxCount), confirms: make(chan confirmResult, 1),
	}
}

// Run dispatches from the stored checkpoint until ctx ends, then drains:
// it commits what is ready at once, waits (up to drainTimeout) for the
// commits in flight, and stores the final checkpoint. Run is called once.
func (d *Dispatcher) Run(ctx context.Context) {
	d.base = d.wal.Checkpoint()
	d.stored, d.next = d.base, d.base
	d.lastRescan = d.clock.Now()
	d.commitCtx, d.cancelCommits = context.WithCancel(context.WithoutCancel(ctx))
	defer d.cancelCommits()
	ticker := time.NewTicker(dispatchBackstopInterval)
	defer ticker.Stop()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	defer wake.Stop()
	for {
		durable := d.durable()
		d.pass(ctx)
		backstop := ticker.C
		if d.quiet() {
			backstop = nil // nothing owed: sleep until a record, result or confirmation
		}
		d.sleeping.Store(backstop == nil)
		select {
		case <-d.lingerWake(wake):
		case <-ctx.Done():
			d.drain(ctx)
			return
		case <-durable:
		case rs := <-d.results:
			d.settleAll(rs)
		case c := <-d.confirms:
			d.confirmed(c)
		case <-backstop:
		}
	}
}

// quiet reports whether the last pass left nothing to do until a record
// becomes durable, a commit settles or a confirmation returns (each wakes
// Run on a channel): it got past the pause and the latch, every record made
// durable is read, done and checkpointed, and nothing is held, skipped,
// running, lingering or due for a rescan. A quiet dispatcher sleeps without the 10 ms
// backstop, so an idle node pays no wake-ups for it.
func (d *Dispatcher) quiet() bool {
	return d.passed && len(d.marks) == 0 && d.base == d.next && d.stored == d.base && d.next == d.wal.DurableNext() &&
		d.held == 0 && d.skipped == 0 && d.running == 0 && d.inflight == 0 &&
		!d.rescanDue && d.wakeAt.IsZero()
}

// durable is the WAL's wake-up channel, nil once the WAL is closed (a
// closed WAL's channel stays closed and would spin the loop).
func (d *Dispatcher) durable() <-chan struct{} {
	if d.walClosed {
		return nil
	}
	return d.wal.Durable()
}

// pass does one round of work: hung commits, rescan, forward read, commit
// launches, discard logs and the checkpoint.
func (d *Dispatcher) pass(ctx context.Context) {
	now := d.clock.Now()
	d.wakeAt, d.passed = time.Time{}, false
	if now.Before(d.pausedTill) || !d.latch.Ready(ctx) {
		return
	}
	defer func() { d.passed = !now.Before(d.pausedTill) }()
	views := newViewCache(d.store, now)
	d.markHung(now)
	if d.rescanDue || now.Sub(d.lastRescan) >= rescanInterval {
		d.rescanDue, d.lastRescan = false, now
		if err := d.rescan(ctx, views); err != nil {
			d.pause(now, "rescan the ingress WAL", err)
			return
		}
	}
	if err := d.readForward(ctx, views); err != nil {
		d.pause(now, "read the ingress WAL", err)
	}
	d.launchReady(now, views)
	d.logDiscards()
	d.advance(now)
}

// pause backs the whole dispatcher off after a WAL failure.
func (d *Dispatcher) pause(now time.Time, what string, err error) {
	if errors.Is(err, domain.ErrClosed) {
		d.walClosed = true
	}
	d.pausedTill = now.Add(failureBackoffDuration)
	d.log.Warn("produce dispatcher paused", slog.String("op", what), slog.Any("error", err))
}

// drain is Run's end: one last pass without linger, then the commits in
// flight land (or are cancelled after drainTimeout) and the checkpoint is
// stored. Confirmations in flight end with Run's context.
func (d *Dispatcher) drain(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
	defer cancel()
	d.draining = true
	d.pass(dctx)
	for d.running > 0 {
		select {
		case rs := <-d.results:
			d.settleAll(rs)
		case <-dctx.Done():
			d.cancelCommits()
			for d.running > 0 {
				d.settleAll(<-d.results)
			}
		}
	}
	d.advance(d.clock.Now())
	d.wg.Wait()
}

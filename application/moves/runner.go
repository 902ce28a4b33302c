package moves

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// outcomeCompleted labels a move that flipped here.
const outcomeCompleted = "completed"

// RunnerStore is what the runner reads and writes of the metadata.
type RunnerStore interface {
	Moves() ([]meta.Move, error)
	// Versions are the replica's view counters: the runner lists moves
	// only when the assignments moved.
	Versions() meta.Versions
	Assignment(topic string, partition int32) (a meta.Assignment, ok bool, err error)
	// Topic reads the topic a move belongs to (its live incarnation).
	Topic(name string) (meta.Topic, bool, error)
	// Links are every fan-out link: an install names its topic's in the
	// move.marker.
	Links() ([]meta.Link, error)
	// Members are read for the source's liveness (force-promote).
	Members() ([]meta.Member, error)
	// Barrier makes the next reads leader reads (flip outcome resolution).
	Barrier(ctx context.Context) error
	ports.MetadataProposer
}

// RunnerDeps are the Runner's dependencies; every one is required.
type RunnerDeps struct {
	Store     RunnerStore
	Peers     ports.PeerTransfer
	Installer ports.PartitionInstaller
	Clock     ports.Clock
	Log       *slog.Logger
	// Self is this node's member id: the runner takes the moves that
	// target it.
	Self string
	// Metrics observes the moves run here; nil observes nothing.
	Metrics Observer
	// Consumers forgets a partition's in-memory consumer state around an
	// install; nil when nothing holds any (tests).
	Consumers interface {
		ForgetPartition(ref domain.PartitionRef)
	}
	// Positions lowers the positions an install brought past its
	// boundary; its zero value lowers none (tests of the copy alone).
	Positions Positions
	// Sweep drives the stale-copy sweep; its zero value runs none (tests
	// of the copy alone).
	Sweep SweepDeps
}

// Observer receives the runner's measurements (narad_moves_*).
type Observer interface {
	Started()
	// Ended counts a move that stopped running here: outcome "completed"
	// with its wall time when it flipped, "" when it ended otherwise.
	Ended(outcome string, d time.Duration)
	Copied(bytes int64)
}

// noObserver observes nothing.
type noObserver struct{}

func (noObserver) Started()                    {}
func (noObserver) Ended(string, time.Duration) {}
func (noObserver) Copied(int64)                {}

// Runner converges the moves the leader targets at this node (internals.md
// §11.1): every second it looks for them and runs one worker per move,
// retrying a failed attempt after the backoff while the move still
// targets this node. Safe for concurrent use.
type Runner struct {
	d RunnerDeps

	mu       sync.Mutex
	running  map[meta.Move]bool
	reports  map[meta.Move]*progress
	sweeping map[partKey]bool
	wg       sync.WaitGroup
	// swept is set while a stale-copy sweep runs; cleanAt is the
	// assignment version (+1, 0 for none) a sweep that found nothing to
	// judge started from.
	swept   atomic.Bool
	cleanAt atomic.Uint64

	// Owned by Tick's caller: the assignment version the last listing saw
	// and the ticks since (a listing at least every runnerFullPassTicks).
	seen  uint64
	since int
	read  bool
	ticks int
	// sweepsSkipped counts the sweeps skipped since the last one started.
	sweepsSkipped int
}

// NewRunner returns a Runner; it panics on a missing dependency.
func NewRunner(d RunnerDeps) *Runner {
	if d.Store == nil || d.Peers == nil || d.Installer == nil || d.Clock == nil || d.Log == nil || d.Self == "" {
		panic("moves: runner needs every dependency")
	}
	if d.Metrics == nil {
		d.Metrics = noObserver{}
	}
	return &Runner{d: d, running: map[meta.Move]bool{}, reports: map[meta.Move]*progress{},
		sweeping: map[partKey]bool{}}
}

// Run looks for inbound moves until ctx ends, then waits for its workers.
func (r *Runner) Run(ctx context.Context) {
	defer r.wg.Wait()
	for {
		r.Tick(ctx)
		if ctxwait.SleepErr(ctx, runnerTickInterval) != nil {
			return
		}
	}
}

// Wait returns once every worker and sweep that Tick started has ended
// (Run waits for them itself).
func (r *Runner) Wait() { r.wg.Wait() }

// Tick starts a worker for every move targeting this node that has none.
// It reads the moves (a scan of every assignment) only when the
// assignments moved since its last listing, and at least every
// runnerFullPassTicks ticks; every sweepEveryTicks ticks it starts the
// stale-copy sweep when one is due (startSweep).
func (r *Runner) Tick(ctx context.Context) {
	if r.ticks++; r.ticks%sweepEveryTicks == 0 {
		r.startSweep(ctx)
	}
	v := r.d.Store.Versions().Of(meta.ViewAssignments)
	r.since++
	if r.read && v == r.seen && r.since < runnerFullPassTicks {
		return
	}
	moves, err := r.d.Store.Moves()
	if err != nil {
		r.d.Log.Debug("move runner: read moves", slog.Any("error", err))
		return
	}
	r.seen, r.since, r.read = v, 0, true
	for _, mv := range moves {
		if mv.To != r.d.Self || mv.From == r.d.Self {
			continue
		}
		r.mu.Lock()
		busy := r.running[mv] || r.sweeping[partKey{mv.Topic, mv.Partition}]
		if !busy {
			r.running[mv] = true
		}
		r.mu.Unlock()
		if !busy {
			r.wg.Add(1)
			go r.drive(ctx, mv)
		}
	}
}

// drive runs attempts of mv until one finishes it or it stops targeting
// this node. Once the source has been dead ForcePromoteAfter, a failed
// attempt gives way to a force-promote of the session's copy.
func (r *Runner) drive(ctx context.Context, mv meta.Move) {
	defer r.wg.Done()
	defer func() { r.mu.Lock(); delete(r.running, mv); delete(r.reports, mv); r.mu.Unlock() }()
	start := r.d.Clock.Now()
	prog := r.track(mv, start)
	r.d.Metrics.Started()
	outcome := ""
	defer func() { r.d.Metrics.Ended(outcome, r.d.Clock.Now().Sub(start)) }()
	log := r.d.Log.With(slog.String("topic", mv.Topic), slog.Int("partition", int(mv.Partition)), slog.String("from", mv.From))
	sess := &session{fresh: true}
	for attempt := 1; ctx.Err() == nil; attempt++ {
		if !r.stillTargeted(mv) {
			r.ended(mv)
			return
		}
		prog.set(func(rep *ports.MoveReport) { rep.Attempts, rep.Phase = attempt, phaseCopying })
		w := r.newWorker(mv, prog, sess)
		err := w.run(ctx)
		if err == nil {
			outcome = outcomeCompleted
			return
		}
		dead := r.sourceDeadFor(mv.From)
		prog.sourceDead.Store(dead > 0)
		if dead >= ForcePromoteAfter && ctx.Err() == nil {
			if err = w.forcePromote(ctx); err == nil {
				outcome = outcomeForcePromoted
				return
			}
		}
		blocked := ""
		if dead >= ForcePromoteAfter {
			blocked = blockedReason(sess, err)
		}
		level := slog.LevelDebug
		if attempt == 1 || attempt%attemptLogEvery == 0 {
			level = slog.LevelWarn
		}
		log.Log(ctx, level, "partition move attempt failed; retrying", slog.Int("attempt", attempt), slog.Any("error", err))
		prog.failed(attempt, err, blocked)
		if ctxwait.SleepErr(ctx, retryBackoff) != nil {
			return
		}
	}
}

// blockedReason says why a force-promote could not run: the session never
// staged a whole listing of the source, or staging does not hold it.
func blockedReason(sess *session, err error) string {
	if !sess.reached || errors.Is(err, errCopyBehind) {
		return blockedSourceDeadCopyBehind
	}
	return blockedCopyUnverifiable
}

// BlockedCounts counts the moves this node runs as destination that cannot
// finish on their own, by narad_moves_blocked reason: source_dead while
// the source is dead and the worker waits for it or for the force-promote
// delay, the worker's own reason once it is blocked.
func (r *Runner) BlockedCounts() map[string]int {
	r.mu.Lock()
	ps := make([]*progress, 0, len(r.reports))
	for _, p := range r.reports {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	out := map[string]int{}
	for _, p := range ps {
		switch rep := p.report(); {
		case rep.Blocked != "":
			out[rep.Blocked]++
		case p.sourceDead.Load():
			out[blockedSourceDead]++
		}
	}
	return out
}

// ended cleans up after a move that stopped targeting this node without
// flipping here: staging goes unless this node owns the partition by then
// (internals.md §11.5). A copy left installed is the stale-copy sweep's.
func (r *Runner) ended(mv meta.Move) {
	row, ok, err := r.d.Store.Assignment(mv.Topic, mv.Partition)
	if err == nil && ok && row.Owner == r.d.Self {
		r.d.Log.Error("a move ended without its flip but this node owns the partition; staging kept for an operator",
			slog.String("topic", mv.Topic), slog.Int("partition", int(mv.Partition)))
		return
	}
	ref := domain.PartitionRef{Topic: mv.Topic, TopicID: domain.TopicID(mv.TopicID), Partition: mv.Partition}
	if err := r.d.Installer.StagingRemove(ref); err != nil {
		r.d.Log.Warn("remove the staging of an ended move", slog.String("topic", mv.Topic), slog.Any("error", err))
	}
}

// stillTargeted reports whether mv is still in flight as planned.
func (r *Runner) stillTargeted(mv meta.Move) bool {
	row, ok, err := r.d.Store.Assignment(mv.Topic, mv.Partition)
	return err == nil && ok && row.Owner == mv.From && row.Target == mv.To && row.BelongsTo(mv.TopicID)
}

package redrive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/narad/narad/application/ctxwait"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// pos names one message of the dead-letter topic.
type pos struct {
	partition int32
	offset    int64
}

// worker runs one job of one dead-letter topic. Its fields belong to its
// goroutine, but for cancel and done.
type worker struct {
	r       *Runner
	dlt     string
	topicID string
	job     meta.Redrive // as last written, with the counts this worker added
	pace    *deadletter.Pace
	saved   time.Time
	skipped map[pos]bool     // left alone by this worker: not fresh when seen again
	unacked map[pos]bool     // produced, ack refused: acked, not produced, when seen again
	refused map[string]error // targets that refused a produce for good

	visibility time.Duration // the dead-letter topic's lease
	quietUntil time.Time     // an empty consume ends the job only from then

	cancel context.CancelFunc
	ctx    context.Context
	done   atomic.Bool
}

// newWorker returns the worker of t's running job, stopped when parent
// ends or stop is called.
func newWorker(parent context.Context, r *Runner, t meta.Topic) *worker {
	now := r.d.Clock.Now()
	w := &worker{r: r, dlt: t.Name, topicID: t.ID, job: *t.Redrive, pace: deadletter.NewPace(t.Redrive.RatePerSec, now),
		visibility: time.Duration(t.VisibilityTimeoutMs) * time.Millisecond,
		saved:      now, skipped: map[pos]bool{}, unacked: map[pos]bool{}, refused: map[string]error{}}
	w.ctx, w.cancel = context.WithCancel(parent)
	return w
}

func (w *worker) ended() bool { return w.done.Load() }

// stop cancels the worker; Runner.wg waits for it.
func (w *worker) stop() { w.cancel() }

// run moves letters until the job ends, then writes its end. A worker
// stopped by the runner (cancel, another leader) writes nothing more.
func (w *worker) run() {
	defer w.done.Store(true)
	ctx := w.ctx
	w.r.d.Log.Info("redrive: job running", slog.String("topic", w.dlt), slog.String("job", w.job.ID),
		slog.Uint64("moved", w.job.Moved))
	if !w.takeUp(ctx) {
		return
	}
	state, failure := w.loop(ctx)
	if state == "" || ctx.Err() != nil {
		return
	}
	w.job.State = state
	if failure != "" {
		w.job.Error = deadletter.TrimError(failure)
	}
	for ctx.Err() == nil {
		err := w.save(ctx)
		if err == nil || errors.Is(err, errJobGone) {
			w.r.d.Log.Info("redrive: job ended", slog.String("topic", w.dlt), slog.String("job", w.job.ID),
				slog.String("state", w.job.State), slog.Uint64("moved", w.job.Moved), slog.Uint64("skipped", w.job.Skipped))
			return
		}
		w.r.d.Log.Warn("redrive: could not write the job's end; trying again", slog.String("topic", w.dlt), slog.String("error", err.Error()))
		ctxwait.Sleep(ctx, w.r.tuned.retry)
	}
}

// takeUp counts this worker in the job's runs before it moves anything. A
// job some worker ran before may have letters leased by it: an empty
// consume cannot end the job until those leases have lapsed, one
// visibility timeout of the dead-letter topic from now.
func (w *worker) takeUp(ctx context.Context) bool {
	if w.job.Runs > 0 {
		w.quietUntil = w.r.d.Clock.Now().Add(w.visibility)
	}
	w.job.Runs++
	for ctx.Err() == nil {
		err := w.save(ctx)
		switch {
		case err == nil:
			return true
		case errors.Is(err, errJobGone):
			return false
		}
		w.transient(ctx, "write the job", err)
	}
	return false
}

// mayEnd says whether a consume that brought nothing new ends the job: not
// while leases of a former worker may still hold letters (it pauses then).
func (w *worker) mayEnd(ctx context.Context) bool {
	if w.r.d.Clock.Now().Before(w.quietUntil) {
		ctxwait.Sleep(ctx, w.r.tuned.retry)
		return false
	}
	return true
}

// loop moves letters until the dead-letter topic brings nothing new, the
// cap is reached, the job is cancelled or ctx ends; it answers the state
// the job ends in and, for a failed job, why; no state when it is to write
// nothing more.
func (w *worker) loop(ctx context.Context) (state, failure string) {
	for ctx.Err() == nil {
		if !w.stillRunning() {
			return "", ""
		}
		n := w.pace.Batch(w.job.Remaining(deadletter.PaceBatchMax))
		if n == 0 {
			return deadletter.RedriveDone, ""
		}
		if !ctxwait.Sleep(ctx, w.pace.Wait(n, w.r.d.Clock.Now())) {
			return "", ""
		}
		ds, err := w.r.d.Source.Lease(ctx, w.dlt, n, w.r.tuned.wait)
		if err != nil {
			w.transient(ctx, "consume", err) // a topic gone ends the job at the next look
			continue
		}
		fresh, fatal := w.batch(ctx, ds)
		switch {
		case fatal != "":
			return deadletter.RedriveFailed, fatal
		case !fresh && w.mayEnd(ctx):
			return deadletter.RedriveDone, ""
		case !fresh:
			continue
		}
		if w.r.d.Clock.Now().Sub(w.saved) >= w.r.tuned.save {
			if err := w.save(ctx); errors.Is(err, errJobGone) {
				return "", ""
			}
		}
	}
	return "", ""
}

// transient logs a failure worth retrying, keeps it as the job's last
// error and pauses.
func (w *worker) transient(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	w.job.Error = deadletter.TrimError(fmt.Sprintf("%s: %v", what, err))
	w.r.d.Log.Warn("redrive: "+what+" failed; trying again", slog.String("topic", w.dlt), slog.String("error", err.Error()))
	ctxwait.Sleep(ctx, w.r.tuned.retry)
}

// errJobGone: the job was cancelled, replaced or its topic deleted.
var errJobGone = errors.New("redrive: the job is no longer running")

// stillRunning reads the job back: false once cancelled, replaced or gone.
func (w *worker) stillRunning() bool {
	t, ok, err := w.r.d.Store.Topic(w.dlt)
	if err != nil {
		return true // a read failure is not a cancel; the next save tells
	}
	return ok && t.ID == w.topicID && t.Redrive != nil && t.Redrive.ID == w.job.ID && t.Redrive.Running()
}

// save writes the job's counts (and its end when its state is no longer
// running).
func (w *worker) save(ctx context.Context) error {
	now := w.r.d.Clock.Now()
	w.job.UpdatedAtMs = max(w.job.UpdatedAtMs, now.UnixMilli())
	env := meta.Envelope{Actor: "node:redrive", AtMs: now.UnixMilli(),
		Event: &meta.SetTopicRedrive{Name: w.dlt, ID: w.topicID, Job: w.job.ID, Redrive: w.job}}
	applied, err := w.r.d.Store.Propose(ctx, env)
	if err != nil {
		return err
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		w.saved = now
		return nil
	case meta.CodeNotFound, meta.CodeConflict:
		return errJobGone
	default:
		return fmt.Errorf("redrive: save job %s: %w", w.job.ID, applied.Result.Err())
	}
}

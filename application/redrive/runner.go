package redrive

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Deps are the Runner's ports; every one is required.
type Deps struct {
	Store   Store
	Source  Source
	Sink    Sink
	Clock   ports.Clock
	Metrics Metrics
	Log     *slog.Logger
}

// Runner starts a worker for each running job while this node leads the
// metadata, and stops it when the job ends, is cancelled or replaced, its
// topic goes, or this node stops leading.
type Runner struct {
	d     Deps
	tuned tuning

	mu      sync.Mutex
	workers map[string]*worker // by dead-letter topic name
	wg      sync.WaitGroup
}

// tuning holds the intervals, shortened by tests.
type tuning struct {
	scan, save, wait, retry time.Duration
}

// Option adjusts a Runner.
type Option func(*tuning)

// Intervals sets the scan, save, lease-wait and retry intervals (a zero
// keeps the default).
func Intervals(scan, save, wait, retry time.Duration) Option {
	return func(t *tuning) {
		t.scan, t.save = cmp.Or(scan, t.scan), cmp.Or(save, t.save)
		t.wait, t.retry = cmp.Or(wait, t.wait), cmp.Or(retry, t.retry)
	}
}

// New returns a Runner; it panics on a missing dependency.
func New(d Deps, opts ...Option) *Runner {
	if d.Store == nil || d.Source == nil || d.Sink == nil || d.Clock == nil || d.Metrics == nil || d.Log == nil {
		panic("redrive: nil dependency")
	}
	r := &Runner{d: d, tuned: tuning{scan: scanInterval, save: saveInterval, wait: leaseWait, retry: retryDelay},
		workers: map[string]*worker{}}
	for _, o := range opts {
		o(&r.tuned)
	}
	return r
}

// jobViews are the views the jobs live in: the topics.
var jobViews = meta.Views(0).With(meta.ViewTopics)

// Run reconciles workers with the jobs every scan interval until ctx ends,
// then stops every worker and waits for them.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(r.tuned.scan)
	defer t.Stop()
	defer r.stopAll()
	var seen meta.Versions
	wasLeader := false
	for {
		leader := r.d.Store.IsLeader()
		if v := r.d.Store.Versions(); leader != wasLeader || v.Moved(seen, jobViews) || r.anyEnded() {
			seen, wasLeader = v, leader
			r.reconcile(ctx, leader)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reconcile starts a worker for each running job without one and stops the
// workers whose job is no longer running (every worker when not leading).
func (r *Runner) reconcile(ctx context.Context, leader bool) {
	want := map[string]meta.Topic{}
	if leader {
		ts, err := r.d.Store.ListTopics("", 0)
		if err != nil {
			r.d.Log.Warn("redrive: could not read the topics; looking again", slog.String("error", err.Error()))
			return
		}
		for _, t := range ts {
			if t.Redrive != nil && t.Redrive.Running() {
				want[t.Name] = t
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, w := range r.workers {
		t, ok := want[name]
		if ok && !w.ended() && t.ID == w.topicID && t.Redrive.ID == w.job.ID {
			delete(want, name)
			continue
		}
		w.stop()
		delete(r.workers, name)
	}
	for name, t := range want {
		w := newWorker(ctx, r, t)
		r.workers[name] = w
		r.wg.Go(w.run)
	}
}

// anyEnded reports whether a worker returned, so its job is looked at again.
func (r *Runner) anyEnded() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.workers {
		if w.ended() {
			return true
		}
	}
	return false
}

func (r *Runner) stopAll() {
	r.mu.Lock()
	for name, w := range r.workers {
		w.stop()
		delete(r.workers, name)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

package moves

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Worker phases as api.md §2.17 names them.
const (
	phaseCopying          = "copying"
	phaseFrozen           = "frozen"
	phaseFlipPending      = "flip_pending"
	phaseWaitingForSource = "waiting_for_source"
	phaseBlocked          = "blocked"
)

// lastErrorMaxBytes bounds the last error a report repeats.
const lastErrorMaxBytes = 256

// progress is one move's report, updated by its worker.
type progress struct {
	mu sync.Mutex
	r  ports.MoveReport
	// sourceDead is set while the last failed attempt found the source
	// dead (narad_moves_blocked source_dead).
	sourceDead atomic.Bool
}

func (p *progress) set(f func(r *ports.MoveReport)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(&p.r)
}

func (p *progress) phase(ph string) { p.set(func(r *ports.MoveReport) { r.Phase = ph }) }

func (p *progress) copied(n int64) { p.set(func(r *ports.MoveReport) { r.CopiedBytes += n }) }

// failed records a failed attempt: waiting for the source, or blocked
// for the reason given.
func (p *progress) failed(attempt int, err error, blocked string) {
	msg := err.Error()
	if len(msg) > lastErrorMaxBytes {
		msg = msg[:lastErrorMaxBytes]
	}
	p.set(func(r *ports.MoveReport) {
		r.Attempts, r.LastError = attempt, strings.ToValidUTF8(msg, "?")
		r.Phase, r.Blocked = phaseWaitingForSource, blocked
		if blocked != "" {
			r.Phase = phaseBlocked
		}
	})
}

func (p *progress) report() ports.MoveReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.r
}

// track registers mv's progress report.
func (r *Runner) track(mv meta.Move, started time.Time) *progress {
	p := &progress{r: ports.MoveReport{Topic: mv.Topic, Partition: mv.Partition, Source: mv.From, Target: mv.To,
		StartedAt: started, Phase: phaseCopying, Attempts: 1}}
	r.mu.Lock()
	r.reports[mv] = p
	r.mu.Unlock()
	return p
}

// Reports lists the moves this node runs as destination, by topic then
// partition (NodeStatus moves).
func (r *Runner) Reports() []ports.MoveReport {
	r.mu.Lock()
	ps := make([]*progress, 0, len(r.reports))
	for _, p := range r.reports {
		ps = append(ps, p)
	}
	r.mu.Unlock()
	out := make([]ports.MoveReport, len(ps))
	for i, p := range ps {
		out[i] = p.report()
	}
	slices.SortFunc(out, func(a, b ports.MoveReport) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/narad/narad/domain/deadletter"
)

// pacer is redrive --rate: deadletter.Pace's token bucket with a clock
// and a sleeper, injected so tests need not sleep. A nil pacer (rate 0)
// never waits.
type pacer struct {
	b     *deadletter.Pace
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

// newPacer returns the pacer for rate messages a second, full, or nil for
// rate 0 (unlimited).
func newPacer(rate int, now func() time.Time, sleep func(context.Context, time.Duration) error) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{b: deadletter.NewPace(uint32(min(rate, math.MaxUint32)), now()), now: now, sleep: sleep}
}

// batch is how many messages one round may take, at most limit.
func (p *pacer) batch(limit int) int {
	if p == nil {
		return limit
	}
	return p.b.Batch(limit)
}

// wait blocks until n tokens are in the bucket, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p == nil {
		return nil
	}
	for d := p.b.Wait(n, p.now()); d > 0; d = p.b.Wait(n, p.now()) {
		if err := p.sleep(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// take spends n tokens, one per message redriven.
func (p *pacer) take(n int) {
	if p != nil {
		p.b.Take(n)
	}
}

// redriveProgress prints `redriven N (R/s), skipped M` on standard error
// about every e.progressEvery until stopped (showProgress).
func redriveProgress(e *env, counts func() (redriven, skipped int64)) (stop func()) {
	start := time.Now()
	return showProgress(e, 60, func() string {
		n, skipped := counts()
		return fmt.Sprintf("redriven %d (%.0f/s), skipped %d", n, float64(n)/time.Since(start).Seconds(), skipped)
	})
}

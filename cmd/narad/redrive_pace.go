package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// pacer is the token bucket of redrive --rate: rate tokens a second, at
// most burst held, one spent per message redriven. A nil pacer (rate 0)
// never waits. The clock and the sleeper are injected so tests need not
// sleep.
type pacer struct {
	rate   float64 // tokens per second
	burst  float64 // bucket size: a tenth of a second's worth, 1 to 100
	tokens float64
	last   time.Time
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
}

// newPacer returns the bucket for rate messages a second, full, or nil for
// rate 0 (unlimited).
func newPacer(rate int, now func() time.Time, sleep func(context.Context, time.Duration) error) *pacer {
	if rate <= 0 {
		return nil
	}
	burst := min(max(math.Ceil(float64(rate)/10), 1), redriveBatchMax)
	return &pacer{rate: float64(rate), burst: burst, tokens: burst, last: now(), now: now, sleep: sleep}
}

// batch is how many messages one round may take, at most limit: the
// bucket's size, so that a batch never waits for more than it can hold.
func (p *pacer) batch(limit int) int {
	if p == nil {
		return limit
	}
	return min(limit, int(p.burst))
}

// wait blocks until n tokens are in the bucket, or ctx ends.
func (p *pacer) wait(ctx context.Context, n int) error {
	if p == nil {
		return nil
	}
	for p.refill(); p.tokens < float64(n); p.refill() {
		d := time.Duration(math.Ceil((float64(n) - p.tokens) / p.rate * float64(time.Second)))
		if err := p.sleep(ctx, d); err != nil {
			return err
		}
	}
	return nil
}

// take spends n tokens, one per message redriven.
func (p *pacer) take(n int) {
	if p != nil {
		p.tokens -= float64(n)
	}
}

func (p *pacer) refill() {
	now := p.now()
	p.tokens = min(p.burst, p.tokens+now.Sub(p.last).Seconds()*p.rate)
	p.last = now
}

// redriveProgress prints `redriven N (R/s), skipped M` on standard error
// about every e.progressEvery until stopped: rewritten in place on a
// terminal, one line each otherwise.
func redriveProgress(e *env, counts func() (redriven, skipped int64)) (stop func()) {
	done := make(chan struct{})
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(e.progressEvery)
		defer t.Stop()
		wrote := false
		for {
			select {
			case <-done:
				if wrote && e.stderrTTY {
					fmt.Fprintln(e.stderr)
				}
				return
			case <-t.C:
				n, skipped := counts()
				line := fmt.Sprintf("redriven %d (%.0f/s), skipped %d", n, float64(n)/time.Since(start).Seconds(), skipped)
				if e.stderrTTY {
					fmt.Fprintf(e.stderr, "\r%-60s", line)
				} else {
					fmt.Fprintln(e.stderr, line)
				}
				wrote = true
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

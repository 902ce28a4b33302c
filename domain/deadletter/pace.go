package deadletter

import (
	"math"
	"time"
)

// PaceBatchMax is the most letters one paced round takes: the batch
// consume and batch ack cap (api.md §2.14.3).
const PaceBatchMax = 100

// Pace is the token bucket of a redrive's rate: rate tokens a second, at
// most a tenth of a second's worth held (1 to PaceBatchMax), one spent per
// letter redriven. A nil Pace (rate 0) is unlimited. It reads no clock: the
// caller passes the time.
type Pace struct {
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewPace returns a full bucket for rate letters a second at now, or nil
// for rate 0.
func NewPace(rate uint32, now time.Time) *Pace {
	if rate == 0 {
		return nil
	}
	burst := min(max(math.Ceil(float64(rate)/10), 1), PaceBatchMax)
	return &Pace{rate: float64(rate), burst: burst, tokens: burst, last: now}
}

// Batch is how many letters one round may take, at most limit: the
// bucket's size, so that a round never waits for more than it can hold.
func (p *Pace) Batch(limit int) int {
	if p == nil {
		return limit
	}
	return min(limit, int(p.burst))
}

// Wait is how long, from now, until n tokens are in the bucket (0: now).
func (p *Pace) Wait(n int, now time.Time) time.Duration {
	if p == nil {
		return 0
	}
	p.refill(now)
	if p.tokens >= float64(n) {
		return 0
	}
	return time.Duration(math.Ceil((float64(n) - p.tokens) / p.rate * float64(time.Second)))
}

// Take spends n tokens, one per letter redriven.
func (p *Pace) Take(n int) {
	if p != nil {
		p.tokens -= float64(n)
	}
}

func (p *Pace) refill(now time.Time) {
	if d := now.Sub(p.last); d > 0 {
		p.tokens = min(p.burst, p.tokens+d.Seconds()*p.rate)
		p.last = now
	}
}

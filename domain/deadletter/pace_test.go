package deadletter_test

import (
	"testing"
	"time"

	"github.com/narad/narad/domain/deadletter"
)

// ensure that the pace lets rate letters a second through, in rounds no
// larger than a tenth of a second's worth (1 to 100), and that rate 0 is
// unlimited.
func TestPaceRate(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		rate         uint32
		total, batch int
		elapsed      time.Duration
	}{
		"ten_per_second": {rate: 10, total: 20, batch: 1, elapsed: 1900 * time.Millisecond},
		"thousand":       {rate: 1000, total: 1000, batch: 100, elapsed: 900 * time.Millisecond},
		"three":          {rate: 3, total: 4, batch: 1, elapsed: time.Second},
		"unlimited":      {rate: 0, total: 500, batch: 100},
	} {
		start := time.Unix(1783615560, 0)
		now := start
		p := deadletter.NewPace(tc.rate, now)
		for done := 0; done < tc.total; {
			n := p.Batch(min(deadletter.PaceBatchMax, tc.total-done))
			if n != min(tc.batch, tc.total-done) {
				t.Fatalf("%s: batch %d, want %d", name, n, tc.batch)
			}
			for d := p.Wait(n, now); d > 0; d = p.Wait(n, now) {
				now = now.Add(d)
			}
			p.Take(n)
			done += n
		}
		if got := now.Sub(start); got < tc.elapsed || got > tc.elapsed+time.Millisecond {
			t.Errorf("%s: took %v, want %v", name, got, tc.elapsed)
		}
	}
}

// ensure that tokens a round did not spend stay in the bucket, and that a
// clock that goes back refills nothing.
func TestPaceKeepsUnspentTokens(t *testing.T) {
	t.Parallel()
	now := time.Unix(1783615560, 0)
	p := deadletter.NewPace(100, now)
	p.Take(4)
	if d := p.Wait(6, now); d != 0 {
		t.Fatalf("waited %v with 6 tokens left", d)
	}
	if d := p.Wait(10, now); d < 40*time.Millisecond || d > 41*time.Millisecond {
		t.Fatalf("waits %v for 4 more tokens, want 40ms", d)
	}
	if d := p.Wait(10, now.Add(-time.Hour)); d < 40*time.Millisecond {
		t.Fatalf("a clock gone back refilled: waits %v", d)
	}
}

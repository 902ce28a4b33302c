package moves_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// countingFreezer records the tokens it was asked with.
type countingFreezer struct {
	mu     sync.Mutex
	tokens []string
}

func (f *countingFreezer) Freeze(_ domain.PartitionRef, token string, _ time.Duration) (string, ports.TransferListing, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens = append(f.tokens, token)
	return "tok", ports.TransferListing{HighWatermark: int64(len(f.tokens))}, nil
}

// leaseCount answers a count that drops by one at each look.
type leaseCount struct{ n atomic.Int64 }

func (l *leaseCount) InFlight(domain.PartitionRef) int {
	if n := l.n.Load(); n > 0 {
		l.n.Add(-1)
		return int(n)
	}
	return 0
}

// steppingClock moves 100 ms forward at every read.
type steppingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(100 * time.Millisecond)
	return c.now
}

// Ensure that a source's handoff waits for its outstanding leases before
// the capture and captures again under the same token after waiting, that
// the wait is bounded when leases never settle, and that a re-arm captures
// at once (internals.md §11.3 step 3).
func TestHandoffDrainsLeasesBeforeTheCapture(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leases int64
		token  string
		want   []string
	}{
		{"no lease out", 0, "", []string{""}},
		{"leases settle", 3, "", []string{"", "tok"}},
		{"leases never settle", 1 << 40, "", []string{"", "tok"}},
		{"a re-arm", 3, "tok", []string{"tok"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, leases := &countingFreezer{}, &leaseCount{}
			leases.n.Store(tc.leases)
			h := &moves.Handoff{Freezer: f, Leases: leases, Clock: &steppingClock{now: time.Unix(0, 0)}}
			tok, l, err := h.Freeze(ref0, tc.token, moves.FreezeTTL)
			if err != nil || tok != "tok" || l.HighWatermark != int64(len(tc.want)) {
				t.Fatalf("freeze: %q %+v %v", tok, l, err)
			}
			if len(f.tokens) != len(tc.want) || f.tokens[0] != tc.want[0] || f.tokens[len(f.tokens)-1] != tc.want[len(tc.want)-1] {
				t.Fatalf("freezer asked with %q, want %q", f.tokens, tc.want)
			}
			if tc.leases == 1<<40 && leases.n.Load() == 0 {
				t.Fatal("the wait for leases that never settle did not end at its bound")
			}
		})
	}
}

package metastore

import (
	"testing"
	"time"
)

// Ensure that only one leaderless "dropped ..." warning per 5 s stays a
// warning, and that other warnings are never demoted.
func TestLeaderlessWarningsAreRateLimited(t *testing.T) {
	lastLeaderlessWarn.Store(0)
	t.Cleanup(func() { lastLeaderlessWarn.Store(0) })
	t0 := time.Unix(1_800_000_000, 0)
	msg := "[f:1,l:48,t:2,c:48,a:48] [00001:72582] t3 dropped proposal, no leader"
	for _, step := range []struct {
		at     time.Duration
		msg    string
		repeat bool
	}{
		{0, msg, false},
		{50 * time.Millisecond, msg, true},
		{time.Second, "[00001:1] t3 dropped read index, no leader", true},
		{2 * time.Second, "breaker n1 to n2 failed", false},
		{5 * time.Second, msg, false},
		{5*time.Second + time.Millisecond, msg, true},
	} {
		if got := leaderlessRepeat(step.msg, t0.Add(step.at)); got != step.repeat {
			t.Fatalf("at %s %q: repeat=%v, want %v", step.at, step.msg, got, step.repeat)
		}
	}
}

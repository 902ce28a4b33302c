package e2e

import (
	"fmt"
	"os"
	"testing"
)

// benchSecurityEnv, set to 1, runs TestBenchSecurityPairs (go tool -modfile=tools.mod task
// bench-security).
const benchSecurityEnv = "NARAD_E2E_BENCH_SECURITY"

// TestBenchSecurityPairs measures what authentication costs: each round runs
// `narad bench` against one node with security off, then against one
// secured node with the root account's credentials, back to back, and the
// log reports each pair, the medians and the nodes' CPU per message. Like
// TestBenchPairs it asserts only that every run accounted for every
// accepted message; it is a measuring tool, off unless
// NARAD_E2E_BENCH_SECURITY=1. Rounds and the load as TestBenchPairs reads
// them (NARAD_E2E_BENCH_ROUNDS, _COUNT, _PRODUCERS, _RATE, _CLIENT,
// _CONSUMERS, _CONSUME_BATCH, _QUIET_SYSMON).
func TestBenchSecurityPairs(t *testing.T) {
	if os.Getenv(benchSecurityEnv) != "1" {
		t.Skipf("a measuring tool: set %s=1 to run it (go tool -modfile=tools.mod task bench-security)", benchSecurityEnv)
	}
	quietSysmon(t)
	rounds, load := envInt(t, benchRoundsEnv, 3), benchLoadFromEnv(t)
	t.Logf("%d rounds of %v, one node", rounds, load)
	var offs, ons []float64
	for r := 1; r <= rounds; r++ {
		var off, on benchRun
		t.Run(fmt.Sprintf("round%d/off", r), func(t *testing.T) {
			off = benchAgainst(t, []*node{startNode(t, t.TempDir(), freePorts(t))}, load)
		})
		t.Run(fmt.Sprintf("round%d/on", r), func(t *testing.T) {
			on = benchAgainst(t, []*node{startSecured(t, rootPassword)}, load, "admin", rootPassword)
		})
		t.Logf("round %d: security off %v | on %v | %.0f%%", r, off, on, 100*on.rate/max(off.rate, 1))
		offs, ons = append(offs, off.rate), append(ons, on.rate)
	}
	mOff, mOn := median(offs), median(ons)
	t.Logf("medians: security off %.0f msg/s, on %.0f msg/s: %.0f%%", mOff, mOn, 100*mOn/max(mOff, 1))
}

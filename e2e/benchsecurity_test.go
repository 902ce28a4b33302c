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
// NARAD_E2E_BENCH_SECURITY=1. Rounds, count and producers as
// TestBenchPairs reads them (NARAD_E2E_BENCH_ROUNDS, _COUNT, _PRODUCERS).
func TestBenchSecurityPairs(t *testing.T) {
	if os.Getenv(benchSecurityEnv) != "1" {
		t.Skipf("a measuring tool: set %s=1 to run it (go tool -modfile=tools.mod task bench-security)", benchSecurityEnv)
	}
	// The nodes run with the quiet runtime monitor (cmd/narad/sysmon.go), as
	// the recorded figures were measured.
	t.Setenv("NARAD_QUIET_SYSMON", "1")
	rounds, count, producers := envInt(t, benchRoundsEnv, 3), envInt(t, benchCountEnv, 60000), envInt(t, benchProducersEnv, 128)
	t.Logf("%d rounds of %d messages, %d single-message producers, %s batch consumers (batch %s), %d partitions, one node",
		rounds, count, producers, benchConsumers, benchConsumeBatch, benchPartitions)
	var offs, ons []float64
	for r := 1; r <= rounds; r++ {
		var off, on benchRun
		t.Run(fmt.Sprintf("round%d/off", r), func(t *testing.T) {
			off = benchAgainst(t, []*node{startNode(t, t.TempDir(), freePorts(t))}, count, producers)
		})
		t.Run(fmt.Sprintf("round%d/on", r), func(t *testing.T) {
			on = benchAgainst(t, []*node{startSecured(t, rootPassword)}, count, producers, "admin", rootPassword)
		})
		perMsg := func(b benchRun) float64 { return float64(b.nodeCPU.Microseconds()) / float64(count) }
		t.Logf("round %d: security off %.0f msg/s (produce p99 %.1f ms, node %.1f us/msg) | on %.0f msg/s (p99 %.1f ms, node %.1f us/msg) | %.0f%%",
			r, off.rate, off.p99, perMsg(off), on.rate, on.p99, perMsg(on), 100*on.rate/max(off.rate, 1))
		offs, ons = append(offs, off.rate), append(ons, on.rate)
	}
	mOff, mOn := median(offs), median(ons)
	t.Logf("medians: security off %.0f msg/s, on %.0f msg/s: %.0f%%", mOff, mOn, 100*mOn/max(mOff, 1))
}

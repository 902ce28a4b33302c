package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ensure that the move series carry the names and labels of api.md §7: a
// move in flight counts until it ends, only a flip counts as completed
// (with its wall time), and copied bytes add up.
func TestMoveSeries(t *testing.T) {
	m := NewMetrics()
	mm := m.Moves()
	mm.Started()
	mm.Started()
	mm.Copied(1 << 20)
	mm.Copied(5)
	mm.Ended("completed", 3*time.Second)
	want := `
# HELP narad_moves_inflight Partition moves this node runs as destination.
# TYPE narad_moves_inflight gauge
narad_moves_inflight 1
# HELP narad_moves_total Finished partition moves by outcome.
# TYPE narad_moves_total counter
narad_moves_total{outcome="completed"} 1
# HELP narad_moves_bytes_total Bytes copied by partition moves.
# TYPE narad_moves_bytes_total counter
narad_moves_bytes_total 1.048581e+06
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_moves_inflight", "narad_moves_total", "narad_moves_bytes_total"); err != nil {
		t.Fatal(err)
	}
	mm.Ended("", time.Second) // aborted: no outcome, no observation
	if n := testutil.CollectAndCount(mm.duration); n != 1 {
		t.Fatalf("%d duration series", n)
	}
	if got := testutil.ToFloat64(mm.inflight); got != 0 {
		t.Fatalf("in flight %v after both ended", got)
	}
}

// ensure that narad_moves_blocked exports every reason of api.md §7, zero
// when none applies, and nothing outside them.
func TestMovesBlockedSeries(t *testing.T) {
	m := NewMetrics()
	m.MovesBlockedGauge(func() map[string]int { return map[string]int{"source_dead": 2, "target_dead": 1, "other": 9} })
	want := `
# HELP narad_moves_blocked Partition moves that cannot finish on their own, by reason.
# TYPE narad_moves_blocked gauge
narad_moves_blocked{reason="copy_unverifiable"} 0
narad_moves_blocked{reason="source_dead"} 2
narad_moves_blocked{reason="source_dead_copy_behind"} 0
narad_moves_blocked{reason="target_dead"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_moves_blocked"); err != nil {
		t.Fatal(err)
	}
}

// ensure that narad_decommission_blocked exports one series per draining
// node and reason, once, and none when nothing blocks.
func TestDecommissionBlockedSeries(t *testing.T) {
	m := NewMetrics()
	blocks := []DecommissionBlock{{"n4", "move_target"}, {"n4", "dispatch_backlog"}, {"n4", "move_target"}}
	m.DecommissionBlockedGauge(func() []DecommissionBlock { return blocks })
	want := `
# HELP narad_decommission_blocked 1 for each reason a draining node cannot leave yet (leader only).
# TYPE narad_decommission_blocked gauge
narad_decommission_blocked{node="n4",reason="dispatch_backlog"} 1
narad_decommission_blocked{node="n4",reason="move_target"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_decommission_blocked"); err != nil {
		t.Fatal(err)
	}
	blocks = nil
	if n := testutil.CollectAndCount(m.Registry, "narad_decommission_blocked"); n != 0 {
		t.Fatalf("%d series with nothing blocked", n)
	}
}

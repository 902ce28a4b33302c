package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ensure that the fan-out series carry the names and labels of api.md §7,
// and that the lag gauges follow the samples read at scrape time.
func TestFanoutSeries(t *testing.T) {
	m := NewMetrics()
	samples := []FanoutSample{
		{Parent: "orders", Child: "audit", Partition: 1, Lag: 7},
		{Parent: "orders", Child: "later", Partition: 0, Lag: 40, Delayed: true, DueLagSeconds: 1.5},
		{Parent: "orders", Child: "new", Partition: 0, Lag: -1},
	}
	f := m.Fanout()
	m.FanoutGauges(func() []FanoutSample { return samples })
	f.Copied("orders", "audit", 5)
	f.Dropped("orders", "audit", 2)
	f.Batch(5, 500)
	want := `
# HELP narad_fanout_committed_total Records copied into children.
# TYPE narad_fanout_committed_total counter
narad_fanout_committed_total{child="audit",parent="orders"} 5
# HELP narad_fanout_child_dropped_messages Records a child never received (data loss).
# TYPE narad_fanout_child_dropped_messages counter
narad_fanout_child_dropped_messages{child="audit",parent="orders"} 2
# HELP narad_fanout_lag_messages Parent high watermark minus the child's cursor.
# TYPE narad_fanout_lag_messages gauge
narad_fanout_lag_messages{child="audit",parent="orders",partition="1"} 7
narad_fanout_lag_messages{child="later",parent="orders",partition="0"} 40
# HELP narad_fanout_due_lag_seconds How far behind due a delay child runs.
# TYPE narad_fanout_due_lag_seconds gauge
narad_fanout_due_lag_seconds{child="later",parent="orders",partition="0"} 1.5
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_fanout_committed_total",
		"narad_fanout_child_dropped_messages", "narad_fanout_lag_messages", "narad_fanout_due_lag_seconds"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(m.Registry, "narad_fanout_batch_records", "narad_fanout_batch_bytes"); err != nil || n != 2 {
		t.Fatalf("batch histograms: %d (%v)", n, err)
	}
	samples = nil
	if n, err := testutil.GatherAndCount(m.Registry, "narad_fanout_lag_messages"); err != nil || n != 0 {
		t.Fatalf("after the cursors stopped: %d series (%v)", n, err)
	}
}

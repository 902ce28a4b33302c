package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the scheduled backlog is read per partition at scrape time,
// and that released messages count once each with their lateness observed
// (issue 19: scheduled backlog and due lag metrics).
func TestScheduleSeries(t *testing.T) {
	m := NewMetrics()
	m.ScheduleGauges(func() []ports.ScheduledPartition {
		return []ports.ScheduledPartition{{Ref: domain.PartitionRef{Topic: "a", Partition: 1}, Count: 7, NextMs: 1}}
	})
	m.MessagesScheduled("a", 1, 9)
	m.MessagesReleased("a", 1, []int64{0, 2000})
	m.MessagesReleased("a", 1, nil)
	want := `
# HELP narad_scheduled_messages Scheduled messages not yet due, kept on disk beside the partition on its owner.
# TYPE narad_scheduled_messages gauge
narad_scheduled_messages{partition="1",topic="a"} 7
# HELP narad_scheduled_messages_total Messages produced with a delay, kept in their partition's schedule on its owner until due.
# TYPE narad_scheduled_messages_total counter
narad_scheduled_messages_total{topic="a"} 9
# HELP narad_scheduled_released_total Scheduled messages moved to their partition's log when due.
# TYPE narad_scheduled_released_total counter
narad_scheduled_released_total{topic="a"} 2
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"narad_scheduled_messages", "narad_scheduled_messages_total", "narad_scheduled_released_total"); err != nil {
		t.Fatal(err)
	}
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "narad_scheduled_due_lag_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if len(mf.GetMetric()) != 1 || h.GetSampleCount() != 2 || h.GetSampleSum() != 2 {
			t.Fatalf("due lag %d samples summing %v, want 2 summing 2 s", h.GetSampleCount(), h.GetSampleSum())
		}
		return
	}
	t.Fatal("no narad_scheduled_due_lag_seconds")
}

package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/ports"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

var _ ports.Metrics = (*Metrics)(nil)

// ensure that the produce and consume series carry the names and labels of api.md §7.
func TestSeriesNamesAndLabels(t *testing.T) {
	m := NewMetrics()
	m.MessagesProduced("orders", 2, 3, 300)
	m.MessagesProduced("orders", 2, 1, 50)
	m.MessagesProduced("audit", 0, 0, 0)
	m.MessagesConsumed("orders", 2, 1, 100)
	m.ConsumeWaited("orders", "timeout", time.Second)
	m.LeaseSettled("orders", "nack")
	m.HTTPRequest("POST /v1/topics/{topic}/produce", "POST", 202, time.Millisecond, 10, 0)
	m.HTTPRequest("GET /v1/topics", "GET", 500, time.Millisecond, 0, 20)
	want := `
# HELP narad_messages_produced_total Records appended, counted on the owner.
# TYPE narad_messages_produced_total counter
narad_messages_produced_total{partition="0",topic="audit"} 0
narad_messages_produced_total{partition="2",topic="orders"} 4
# HELP narad_bytes_produced_total Payload bytes appended.
# TYPE narad_bytes_produced_total counter
narad_bytes_produced_total{partition="0",topic="audit"} 0
narad_bytes_produced_total{partition="2",topic="orders"} 350
# HELP narad_messages_consumed_total Messages handed to queue consumers (replays not counted).
# TYPE narad_messages_consumed_total counter
narad_messages_consumed_total{partition="2",topic="orders"} 1
# HELP narad_bytes_consumed_total Payload bytes handed to queue consumers.
# TYPE narad_bytes_consumed_total counter
narad_bytes_consumed_total{partition="2",topic="orders"} 100
# HELP narad_consume_empty_total Consumes that found nothing.
# TYPE narad_consume_empty_total counter
narad_consume_empty_total{topic="orders"} 1
# HELP narad_nack_total Nacks.
# TYPE narad_nack_total counter
narad_nack_total{topic="orders"} 1
# HELP narad_errors_total Cross-cutting errors.
# TYPE narad_errors_total counter
narad_errors_total{component="http",kind="5xx"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"narad_messages_produced_total", "narad_bytes_produced_total", "narad_messages_consumed_total", "narad_bytes_consumed_total",
		"narad_consume_empty_total", "narad_nack_total", "narad_errors_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.ToFloat64(m.httpRequests.WithLabelValues("POST /v1/topics/{topic}/produce", "POST", "202")); n != 1 {
		t.Fatalf("http requests %v", n)
	}
}

// ensure that per-partition gauges follow the samples read at scrape time.
func TestPartitionGauges(t *testing.T) {
	m := NewMetrics()
	samples := []PartitionSample{{Topic: "orders", Partition: 1, InFlight: 3, AckedAhead: 2, Lag: 7}, {Topic: "x", Partition: 0, Lag: -1}}
	m.PartitionGauges(func() []PartitionSample { return samples })
	want := `
# HELP narad_consumer_lag_messages High watermark minus the committed frontier.
# TYPE narad_consumer_lag_messages gauge
narad_consumer_lag_messages{partition="1",topic="orders"} 7
# HELP narad_inflight_size Current leases per partition.
# TYPE narad_inflight_size gauge
narad_inflight_size{partition="0",topic="x"} 0
narad_inflight_size{partition="1",topic="orders"} 3
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_consumer_lag_messages", "narad_inflight_size"); err != nil {
		t.Fatal(err)
	}
	samples = nil
	if n, err := testutil.GatherAndCount(m.Registry, "narad_inflight_size"); err != nil || n != 0 {
		t.Fatalf("a gone partition is still exported: %d %v", n, err)
	}
}

// ensure that retention drops are exported per partition and the oldest-unacked age only when known.
func TestPartitionDropsAndAge(t *testing.T) {
	m := NewMetrics()
	m.PartitionGauges(func() []PartitionSample {
		return []PartitionSample{{Topic: "a", Partition: 0, Dropped: 4, OldestAgeSeconds: 2.5}, {Topic: "b", Partition: 1, OldestAgeSeconds: -1}}
	})
	want := `
# HELP narad_consumer_dropped_messages Unacked records already deleted by retention.
# TYPE narad_consumer_dropped_messages gauge
narad_consumer_dropped_messages{partition="0",topic="a"} 4
narad_consumer_dropped_messages{partition="1",topic="b"} 0
# HELP narad_oldest_unconsumed_message_age_seconds Age of the oldest unacked record.
# TYPE narad_oldest_unconsumed_message_age_seconds gauge
narad_oldest_unconsumed_message_age_seconds{partition="0",topic="a"} 2.5
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_consumer_dropped_messages", "narad_oldest_unconsumed_message_age_seconds"); err != nil {
		t.Fatal(err)
	}
}

// ensure that the messages held back by delayed nacks are exported per
// partition (api-extensions.md "Nack with a delay").
func TestPartitionNackDelayed(t *testing.T) {
	m := NewMetrics()
	m.PartitionGauges(func() []PartitionSample {
		return []PartitionSample{{Topic: "a", Partition: 0, InFlight: 5, NackDelayed: 3, Lag: -1}, {Topic: "b", Partition: 2, Lag: -1}}
	})
	want := `
# HELP narad_nack_delayed_messages Messages a nack with a delay or the topic's redelivery backoff holds back from delivery (counted in narad_inflight_size too).
# TYPE narad_nack_delayed_messages gauge
narad_nack_delayed_messages{partition="0",topic="a"} 3
narad_nack_delayed_messages{partition="2",topic="b"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_nack_delayed_messages"); err != nil {
		t.Fatal(err)
	}
}

package bootstrap

import (
	"testing"
	"time"
)

// pollMetric polls series until cond holds on its value or 20 s pass.
func pollMetric(t *testing.T, base, series string, cond func(float64) bool) float64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := metric(t, base, series)
		if cond(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, never as expected", series, v)
		}
		time.Sleep(20 * time.Millisecond) // polling the node, bounded by the deadline
	}
}

// ensure that on a running node a committed record shows in the storage and
// size series of its partition, the data-dir gauges are exported, and a
// schema refusal and a validation are counted (api.md §7; no
// api-conformance line covers these series).
func TestStorageSizeAndSchemaMetrics(t *testing.T) {
	base := startedNode(t)
	if code, body := send(t, "POST", base+"/v1/topics", `{"name":"sized","schema":{"type":"object"}}`, jsonCT); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := send(t, "POST", base+"/v1/topics/sized/produce?partition=0", `{"a":1}`, jsonCT); code != 202 {
		t.Fatalf("produce: %d %s", code, body)
	}
	if code, _ := send(t, "POST", base+"/v1/topics/sized/produce?partition=0", `"not an object"`, jsonCT); code != 400 {
		t.Fatalf("produce refused by the schema answered %d", code)
	}
	if v := metric(t, base, `narad_schema_rejections_total{reason="invalid"}`); v != 1 {
		t.Errorf(`narad_schema_rejections_total{reason="invalid"} = %v, want 1`, v)
	}
	if v := metric(t, base, "narad_schema_validation_seconds_count"); v < 2 {
		t.Errorf("narad_schema_validation_seconds_count = %v, want at least 2", v)
	}
	size := pollMetric(t, base, `narad_partition_size_bytes{partition="0",topic="sized"}`, func(v float64) bool { return v > 0 })
	if v := metric(t, base, `narad_segments{partition="0",topic="sized"}`); v != 1 {
		t.Errorf("narad_segments = %v, want 1", v)
	}
	if v := metric(t, base, `narad_topic_bytes{topic="sized"}`); v != size {
		t.Errorf("narad_topic_bytes = %v, want the one partition's %v", v, size)
	}
	if v := metric(t, base, `narad_storage_flush_bytes_total{partition="0",topic="sized"}`); v != size {
		t.Errorf("narad_storage_flush_bytes_total = %v, want the segment's %v", v, size)
	}
	if v := metric(t, base, `narad_storage_fsync_duration_seconds_count{partition="0",topic="sized"}`); v < 1 {
		t.Errorf("narad_storage_fsync_duration_seconds_count = %v, want at least 1", v)
	}
	for _, series := range []string{"narad_data_dir_size_bytes", "narad_data_dir_available_bytes"} {
		if v := metric(t, base, series); v <= 0 {
			t.Errorf("%s = %v, want > 0", series, v)
		}
	}
}

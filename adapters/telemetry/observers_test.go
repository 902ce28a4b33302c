package telemetry

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// ensure that the storage observer feeds the narad_storage_* series and
// narad_errors_total{component="storage"} with the names and labels of
// api.md §7.
func TestStorageObserverSeries(t *testing.T) {
	m := NewMetrics()
	s := m.Storage()
	s.Flushed("orders", 1, 4096, time.Millisecond)
	s.Flushed("orders", 1, 1024, time.Millisecond)
	s.Fsynced("orders", 1, 2*time.Millisecond)
	s.HighWatermarkPersisted("orders", 1, time.Millisecond, nil)
	s.HighWatermarkPersisted("orders", 1, time.Millisecond, errors.New("disk"))
	s.RetentionDeleted("orders", 1, 800, 20)
	s.RetentionRun("orders", 1, time.Millisecond)
	s.StorageError("fsync_poisoned")
	s.StorageError("retention_unlink")
	want := `
# HELP narad_storage_flush_bytes_total Frame bytes written to segments.
# TYPE narad_storage_flush_bytes_total counter
narad_storage_flush_bytes_total{partition="1",topic="orders"} 5120
# HELP narad_storage_retention_bytes_deleted_total Segment bytes deleted by retention.
# TYPE narad_storage_retention_bytes_deleted_total counter
narad_storage_retention_bytes_deleted_total{partition="1",reason="age",topic="orders"} 800
# HELP narad_storage_retention_messages_deleted_total Records deleted by retention.
# TYPE narad_storage_retention_messages_deleted_total counter
narad_storage_retention_messages_deleted_total{partition="1",reason="age",topic="orders"} 20
# HELP narad_errors_total Cross-cutting errors.
# TYPE narad_errors_total counter
narad_errors_total{component="storage",kind="fsync_poisoned"} 1
narad_errors_total{component="storage",kind="retention_unlink"} 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "narad_storage_flush_bytes_total",
		"narad_storage_retention_bytes_deleted_total", "narad_storage_retention_messages_deleted_total", "narad_errors_total"); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{
		"narad_storage_flush_duration_seconds":                  2,
		"narad_storage_fsync_duration_seconds":                  1,
		"narad_storage_high_watermark_persist_duration_seconds": 2,
		"narad_storage_retention_run_duration_seconds":          1,
	}
	checkHistogramCounts(t, m.Registry, counts)
	hwm := seriesOf(t, m.Registry, "narad_storage_high_watermark_persist_duration_seconds")
	if len(hwm) != 2 {
		t.Fatalf("hwm persist series %d, want one per outcome", len(hwm))
	}
	for _, h := range hwm {
		if h.GetHistogram().GetSampleCount() != 1 {
			t.Fatalf("hwm series %v counts %d, want 1 each", h.GetLabel(), h.GetHistogram().GetSampleCount())
		}
	}
	fsync := seriesOf(t, m.Registry, "narad_storage_fsync_duration_seconds")[0].GetHistogram()
	if b := fsync.GetBucket(); len(b) != storageIOBuckets || b[2].GetCumulativeCount() != 0 || b[3].GetCumulativeCount() != 1 ||
		b[3].GetUpperBound() != 0.0064 || b[8].GetCumulativeCount() != 1 || fsync.GetSampleSum() != 0.002 {
		t.Fatalf("fsync histogram %v, want one 2 ms observation from the le=0.0064 bucket on", fsync)
	}
}

// seriesOf gathers the series of the family name.
func seriesOf(t *testing.T, g prometheus.Gatherer, name string) []*dto.Metric {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()
		}
	}
	return nil
}

// ensure that a closed log takes every per-partition storage series of its
// partition with it (and only those), so series follow open logs.
func TestStorageSeriesGoWithTheirLog(t *testing.T) {
	m := NewMetrics()
	s := m.Storage()
	for _, p := range []int32{1, 2} {
		s.Flushed("orders", p, 4096, time.Millisecond)
		s.Fsynced("orders", p, time.Millisecond)
		s.HighWatermarkPersisted("orders", p, time.Millisecond, nil)
		s.HighWatermarkPersisted("orders", p, time.Millisecond, errors.New("disk"))
		s.RetentionDeleted("orders", p, 800, 20)
		s.RetentionRun("orders", p, time.Millisecond)
	}
	s.Closed("orders", 1)
	names := []string{"narad_storage_flush_duration_seconds", "narad_storage_fsync_duration_seconds",
		"narad_storage_flush_bytes_total", "narad_storage_high_watermark_persist_duration_seconds",
		"narad_storage_retention_bytes_deleted_total", "narad_storage_retention_messages_deleted_total",
		"narad_storage_retention_run_duration_seconds"}
	for _, name := range names {
		want := 1
		if name == "narad_storage_high_watermark_persist_duration_seconds" {
			want = 2 // one per outcome
		}
		got := seriesOf(t, m.Registry, name)
		if len(got) != want {
			t.Errorf("%s: %d series after partition 1 closed, want %d (partition 2's)", name, len(got), want)
		}
		for _, g := range got {
			for _, l := range g.GetLabel() {
				if l.GetName() == "partition" && l.GetValue() != "2" {
					t.Errorf("%s: series of partition %s left after its close", name, l.GetValue())
				}
			}
		}
	}
}

// ensure that the schema observer feeds narad_schema_validation_seconds,
// narad_schema_validations_in_flight and narad_schema_rejections_total.
func TestSchemaObserverSeries(t *testing.T) {
	m := NewMetrics()
	s := m.Schema()
	s.ValidationStarted()
	s.ValidationStarted()
	s.ValidationFinished(time.Millisecond)
	s.Rejected("busy")
	s.Rejected("depth")
	s.Rejected("depth")
	want := `
# HELP narad_schema_validations_in_flight Validations running under the bound.
# TYPE narad_schema_validations_in_flight gauge
narad_schema_validations_in_flight 1
# HELP narad_schema_rejections_total Payloads and schemas refused.
# TYPE narad_schema_rejections_total counter
narad_schema_rejections_total{reason="busy"} 1
narad_schema_rejections_total{reason="depth"} 2
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"narad_schema_validations_in_flight", "narad_schema_rejections_total"); err != nil {
		t.Fatal(err)
	}
	checkHistogramCounts(t, m.Registry, map[string]uint64{"narad_schema_validation_seconds": 1})
}

// ensure that narad_ack_rejected_total{reason} is registered (a second
// registration collides) and exports no sample, as acks are never refused
// in v3 (api.md §7).
func TestAckRejectedRegisteredNeverIncremented(t *testing.T) {
	m := NewMetrics()
	dup := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_ack_rejected_total", Help: "x"}, []string{"reason"})
	if err := m.Registry.Register(dup); err == nil {
		t.Fatal("narad_ack_rejected_total registered again: it was not registered")
	}
	if n, err := testutil.GatherAndCount(m.Registry, "narad_ack_rejected_total"); err != nil || n != 0 {
		t.Fatalf("narad_ack_rejected_total exports %d samples (%v), want none", n, err)
	}
}

// ensure that the size gauges follow the samples read at scrape time, sum
// per topic, and drop a partition that went away.
func TestSizeGauges(t *testing.T) {
	m := NewMetrics()
	samples := []SizeSample{{Topic: "orders", Partition: 0, Bytes: 100, Segments: 1}, {Topic: "orders", Partition: 2, Bytes: 250, Segments: 3}, {Topic: "x", Partition: 0}}
	m.SizeGauges(func() []SizeSample { return samples })
	want := `
# HELP narad_partition_size_bytes Bytes of a partition's segment files on this node.
# TYPE narad_partition_size_bytes gauge
narad_partition_size_bytes{partition="0",topic="orders"} 100
narad_partition_size_bytes{partition="0",topic="x"} 0
narad_partition_size_bytes{partition="2",topic="orders"} 250
# HELP narad_segments Segment files of a partition on this node.
# TYPE narad_segments gauge
narad_segments{partition="0",topic="orders"} 1
narad_segments{partition="0",topic="x"} 0
narad_segments{partition="2",topic="orders"} 3
# HELP narad_topic_bytes Bytes of a topic's partitions on this node.
# TYPE narad_topic_bytes gauge
narad_topic_bytes{topic="orders"} 350
narad_topic_bytes{topic="x"} 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"narad_partition_size_bytes", "narad_segments", "narad_topic_bytes"); err != nil {
		t.Fatal(err)
	}
	samples = samples[:1]
	if n, err := testutil.GatherAndCount(m.Registry, "narad_partition_size_bytes", "narad_topic_bytes"); err != nil || n != 2 {
		t.Fatalf("after two partitions left: %d series (%v), want 2", n, err)
	}
}

// ensure that the data-dir gauges read statfs of the directory (on Linux)
// and stay absent for a directory statfs cannot read.
func TestDataDirGauges(t *testing.T) {
	m := NewMetrics()
	m.DataDirGauges(t.TempDir())
	used, avail, err := diskUsage(t.TempDir())
	if err != nil {
		t.Skipf("no statfs here: %v", err)
	}
	if used == 0 || avail == 0 {
		t.Fatalf("statfs used %d avail %d", used, avail)
	}
	if n, err := testutil.GatherAndCount(m.Registry, "narad_data_dir_size_bytes", "narad_data_dir_available_bytes"); err != nil || n != 2 {
		t.Fatalf("data-dir gauges: %d series (%v), want 2", n, err)
	}
	gone := NewMetrics()
	gone.DataDirGauges(t.TempDir() + "/missing")
	if n, err := testutil.GatherAndCount(gone.Registry, "narad_data_dir_size_bytes"); err != nil || n != 0 {
		t.Fatalf("unreadable dir exported %d series (%v)", n, err)
	}
}

// checkHistogramCounts fails t unless each named histogram family holds the
// given number of observations over all its series.
func checkHistogramCounts(t *testing.T, g prometheus.Gatherer, want map[string]uint64) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if h := m.GetHistogram(); h != nil {
				got[f.GetName()] += h.GetSampleCount()
			}
		}
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d observations, want %d", name, got[name], n)
		}
	}
}

func histogramCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	c, ok := o.(prometheus.Collector)
	if !ok {
		t.Fatal("observer is not a collector")
	}
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 {
		t.Fatalf("gather: %v", err)
	}
	return families[0].GetMetric()[0].GetHistogram().GetSampleCount()
}

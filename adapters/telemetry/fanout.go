package telemetry

import "github.com/prometheus/client_golang/prometheus"

// FanoutMetrics records the fan-out engine's narad_fanout_* counters and
// histograms (api.md §7). It implements the engine's metrics interface:
// every call is a label lookup and an atomic add.
type FanoutMetrics struct {
	committed, dropped       *prometheus.CounterVec
	batchRecords, batchBytes prometheus.Histogram
}

// FanoutSample is one local fan-out cursor at scrape time.
type FanoutSample struct {
	Parent    string
	Child     string
	Partition int32
	// Lag is the parent's high watermark minus the cursor; -1 unknown.
	Lag int64
	// Delayed marks a delay child; DueLagSeconds is then how far behind
	// due it runs.
	Delayed       bool
	DueLagSeconds float64
}

// Fanout registers the fan-out counters and histograms the returned
// FanoutMetrics feeds. Call it once per registry.
func (m *Metrics) Fanout() *FanoutMetrics {
	pc := []string{"parent", "child"}
	f := &FanoutMetrics{
		committed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_fanout_committed_total",
			Help: "Records copied into children."}, pc),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_fanout_child_dropped_messages",
			Help: "Records a child never received (data loss)."}, pc),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "narad_fanout_batch_records",
			Help:    "Records per fan-out batch.",
			Buckets: prometheus.ExponentialBuckets(fanoutRecordsBucketStart, bucketFactor, fanoutRecordsBuckets)}),
		batchBytes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "narad_fanout_batch_bytes",
			Help:    "Key and payload bytes per fan-out batch.",
			Buckets: prometheus.ExponentialBuckets(fanoutBytesBucketStart, bucketFactor, fanoutBytesBuckets)}),
	}
	m.Registry.MustRegister(f.committed, f.dropped, f.batchRecords, f.batchBytes)
	return f
}

// FanoutGauges registers narad_fanout_lag_messages and
// narad_fanout_due_lag_seconds, read from sample at every scrape (a cursor
// that stopped simply stops appearing). sample must answer quickly.
func (m *Metrics) FanoutGauges(sample func() []FanoutSample) {
	pcp := []string{"parent", "child", "partition"}
	m.Registry.MustRegister(&fanoutCollector{
		sample: sample,
		lag:    prometheus.NewDesc("narad_fanout_lag_messages", "Parent high watermark minus the child's cursor.", pcp, nil),
		due:    prometheus.NewDesc("narad_fanout_due_lag_seconds", "How far behind due a delay child runs.", pcp, nil),
	})
}

// Copied counts records copied into child.
func (f *FanoutMetrics) Copied(parent, child string, records int) {
	f.committed.WithLabelValues(parent, child).Add(float64(records))
}

// Dropped counts records child will never receive.
func (f *FanoutMetrics) Dropped(parent, child string, records int64) {
	f.dropped.WithLabelValues(parent, child).Add(float64(records))
}

// Batch observes one delivered batch.
func (f *FanoutMetrics) Batch(records, bytes int) {
	f.batchRecords.Observe(float64(records))
	f.batchBytes.Observe(float64(bytes))
}

type fanoutCollector struct {
	sample   func() []FanoutSample
	lag, due *prometheus.Desc
}

func (c *fanoutCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.due
}

func (c *fanoutCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sample() {
		p := part(s.Partition)
		if s.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(s.Lag), s.Parent, s.Child, p)
		}
		if s.Delayed {
			ch <- prometheus.MustNewConstMetric(c.due, prometheus.GaugeValue, s.DueLagSeconds, s.Parent, s.Child, p)
		}
	}
}

package telemetry

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// PartitionSample is one local partition's consumer state at scrape time.
type PartitionSample struct {
	Topic      string
	Partition  int32
	InFlight   int
	AckedAhead int
	// Lag is the high watermark minus the committed frontier; -1 unknown.
	Lag int64
}

// partitionCollector turns samples read at scrape time into the
// per-partition gauges of api.md §7; a partition that went away simply
// stops appearing.
type partitionCollector struct {
	sample               func() []PartitionSample
	inflight, ahead, lag *prometheus.Desc
}

// PartitionGauges registers narad_inflight_size, narad_acked_ahead_size and
// narad_consumer_lag_messages, read from sample at every scrape.
func (m *Metrics) PartitionGauges(sample func() []PartitionSample) {
	labels := []string{"topic", "partition"}
	m.Registry.MustRegister(&partitionCollector{
		sample:   sample,
		inflight: prometheus.NewDesc("narad_inflight_size", "Current leases per partition.", labels, nil),
		ahead:    prometheus.NewDesc("narad_acked_ahead_size", "Out-of-order acks held per partition.", labels, nil),
		lag:      prometheus.NewDesc("narad_consumer_lag_messages", "High watermark minus the committed frontier.", labels, nil),
	})
}

func (c *partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.inflight
	ch <- c.ahead
	ch <- c.lag
}

func (c *partitionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sample() {
		p := strconv.Itoa(int(s.Partition))
		ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(s.InFlight), s.Topic, p)
		ch <- prometheus.MustNewConstMetric(c.ahead, prometheus.GaugeValue, float64(s.AckedAhead), s.Topic, p)
		if s.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(s.Lag), s.Topic, p)
		}
	}
}

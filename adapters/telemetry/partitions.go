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
	// Dropped counts unacked records retention deleted.
	Dropped int64
	// OldestAgeSeconds is the age of the oldest unacked record (0 when all
	// are settled); negative when unknown (a closed log).
	OldestAgeSeconds float64
	// NackDelayed counts the messages a nack with a delay holds back (they
	// are in InFlight too).
	NackDelayed int
}

// partitionCollector turns samples read at scrape time into the
// per-partition gauges of api.md §7; a partition that went away simply
// stops appearing.
type partitionCollector struct {
	sample               func() []PartitionSample
	inflight, ahead, lag *prometheus.Desc
	dropped, age         *prometheus.Desc
	nackDelayed          *prometheus.Desc
}

// PartitionGauges registers narad_inflight_size, narad_acked_ahead_size,
// narad_consumer_lag_messages, narad_consumer_dropped_messages,
// narad_oldest_unconsumed_message_age_seconds and (ours,
// api-extensions.md "Nack with a delay") narad_nack_delayed_messages, read
// from sample at every scrape.
func (m *Metrics) PartitionGauges(sample func() []PartitionSample) {
	labels := []string{"topic", "partition"}
	m.Registry.MustRegister(&partitionCollector{
		sample:   sample,
		inflight: prometheus.NewDesc("narad_inflight_size", "Current leases per partition.", labels, nil),
		ahead:    prometheus.NewDesc("narad_acked_ahead_size", "Out-of-order acks held per partition.", labels, nil),
		lag:      prometheus.NewDesc("narad_consumer_lag_messages", "High watermark minus the committed frontier.", labels, nil),
		dropped:  prometheus.NewDesc("narad_consumer_dropped_messages", "Unacked records already deleted by retention.", labels, nil),
		age:      prometheus.NewDesc("narad_oldest_unconsumed_message_age_seconds", "Age of the oldest unacked record.", labels, nil),
		nackDelayed: prometheus.NewDesc("narad_nack_delayed_messages",
			"Messages a nack with a delay or the topic's redelivery backoff holds back from delivery (counted in narad_inflight_size too).", labels, nil),
	})
}

func (c *partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.inflight
	ch <- c.ahead
	ch <- c.lag
	ch <- c.dropped
	ch <- c.age
	ch <- c.nackDelayed
}

func (c *partitionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.sample() {
		p := strconv.Itoa(int(s.Partition))
		ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(s.InFlight), s.Topic, p)
		ch <- prometheus.MustNewConstMetric(c.ahead, prometheus.GaugeValue, float64(s.AckedAhead), s.Topic, p)
		if s.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(s.Lag), s.Topic, p)
		}
		ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.GaugeValue, float64(s.Dropped), s.Topic, p)
		if s.OldestAgeSeconds >= 0 {
			ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, s.OldestAgeSeconds, s.Topic, p)
		}
		ch <- prometheus.MustNewConstMetric(c.nackDelayed, prometheus.GaugeValue, float64(s.NackDelayed), s.Topic, p)
	}
}

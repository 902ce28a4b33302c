package telemetry

import (
	"strconv"

	"github.com/narad/narad/ports"
	"github.com/prometheus/client_golang/prometheus"
)

// scheduleMetrics are the series of per-message delays (ours,
// api-extensions.md "Per-message delay").
type scheduleMetrics struct {
	scheduled *prometheus.CounterVec
	released  *prometheus.CounterVec
	dueLag    *prometheus.HistogramVec
}

func newScheduleMetrics(r *prometheus.Registry) scheduleMetrics {
	m := scheduleMetrics{
		scheduled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_scheduled_messages_total",
			Help: "Messages produced with a delay, kept in their partition's schedule on its owner until due."}, []string{"topic"}),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_scheduled_released_total",
			Help: "Scheduled messages moved to their partition's log when due."}, []string{"topic"}),
		dueLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_scheduled_due_lag_seconds",
			Help:    "How late a scheduled message reached its partition's log: release time less its deliver-at.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"topic"}),
	}
	r.MustRegister(m.scheduled, m.released, m.dueLag)
	return m
}

// MessagesScheduled implements ports.Metrics.
func (m *Metrics) MessagesScheduled(topic string, _ int32, records int) {
	m.schedule.scheduled.WithLabelValues(topic).Add(float64(records))
}

// MessagesReleased implements ports.Metrics.
func (m *Metrics) MessagesReleased(topic string, _ int32, lagsMs []int64) {
	if len(lagsMs) == 0 {
		return
	}
	m.schedule.released.WithLabelValues(topic).Add(float64(len(lagsMs)))
	h := m.schedule.dueLag.WithLabelValues(topic)
	for _, lag := range lagsMs {
		h.Observe(float64(lag) / 1000)
	}
}

// ScheduleGauges registers narad_scheduled_messages{topic,partition}, the
// scheduled backlog of each local partition, read from list at every scrape.
func (m *Metrics) ScheduleGauges(list func() []ports.ScheduledPartition) {
	m.Registry.MustRegister(&scheduleCollector{list: list, backlog: prometheus.NewDesc("narad_scheduled_messages",
		"Scheduled messages not yet due, kept on disk beside the partition on its owner.", []string{"topic", "partition"}, nil)})
}

type scheduleCollector struct {
	list    func() []ports.ScheduledPartition
	backlog *prometheus.Desc
}

func (c *scheduleCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.backlog }

func (c *scheduleCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.list() {
		ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(p.Count),
			p.Ref.Topic, strconv.Itoa(int(p.Ref.Partition)))
	}
}

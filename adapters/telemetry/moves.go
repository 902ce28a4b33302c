package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MoveMetrics records the move runner's narad_moves_* series (api.md §7):
// moves this node runs as destination, finished moves by outcome, their
// wall time and the bytes they copied. Every call is an atomic add.
type MoveMetrics struct {
	inflight prometheus.Gauge
	total    *prometheus.CounterVec
	duration prometheus.Histogram
	bytes    prometheus.Counter
}

// Moves registers the move series the returned MoveMetrics feeds. Call it
// once per registry.
func (m *Metrics) Moves() *MoveMetrics {
	mm := &MoveMetrics{
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "narad_moves_inflight",
			Help: "Partition moves this node runs as destination."}),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_moves_total",
			Help: "Finished partition moves by outcome."}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "narad_moves_duration_seconds",
			Help:    "Wall time of a finished partition move.",
			Buckets: prometheus.ExponentialBuckets(moveSecondsBucketStart, bucketFactor, moveSecondsBuckets)}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_moves_bytes_total",
			Help: "Bytes copied by partition moves."}),
	}
	m.Registry.MustRegister(mm.inflight, mm.total, mm.duration, mm.bytes)
	return mm
}

// Started counts a move this node began as destination.
func (mm *MoveMetrics) Started() { mm.inflight.Inc() }

// Ended counts a move that stopped running here: with outcome
// ("completed") when it flipped, taking d; with outcome empty when it
// ended otherwise (aborted, re-planned).
func (mm *MoveMetrics) Ended(outcome string, d time.Duration) {
	mm.inflight.Dec()
	if outcome != "" {
		mm.total.WithLabelValues(outcome).Inc()
		mm.duration.Observe(d.Seconds())
	}
}

// Copied counts bytes a move copied.
func (mm *MoveMetrics) Copied(bytes int64) { mm.bytes.Add(float64(bytes)) }

// MovesBlockedReasons are the reasons narad_moves_blocked reports (api.md
// §7), every one exported, zero when none applies.
var MovesBlockedReasons = []string{"copy_unverifiable", "source_dead_copy_behind", "source_dead", "target_dead"}

// movesBlockedCollector exports narad_moves_blocked from counts read at
// scrape time.
type movesBlockedCollector struct {
	sample func() map[string]int
	desc   *prometheus.Desc
}

// MovesBlockedGauge registers narad_moves_blocked{reason}: moves that
// cannot finish on their own, counted by sample at every scrape (reasons
// outside MovesBlockedReasons are not exported).
func (m *Metrics) MovesBlockedGauge(sample func() map[string]int) {
	m.Registry.MustRegister(&movesBlockedCollector{sample: sample,
		desc: prometheus.NewDesc("narad_moves_blocked", "Partition moves that cannot finish on their own, by reason.", []string{"reason"}, nil)})
}

func (c *movesBlockedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *movesBlockedCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.sample()
	for _, reason := range MovesBlockedReasons {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[reason]), reason)
	}
}

// DecommissionBlock is one reason a draining node cannot leave yet.
type DecommissionBlock struct {
	Node, Reason string
}

// decommissionBlockedCollector exports narad_decommission_blocked from the
// blockers read at scrape time.
type decommissionBlockedCollector struct {
	sample func() []DecommissionBlock
	desc   *prometheus.Desc
}

// DecommissionBlockedGauge registers narad_decommission_blocked{node,
// reason}: 1 for each reason that keeps a draining node in the cluster,
// as the leader sees it (sample answers nothing on other nodes).
func (m *Metrics) DecommissionBlockedGauge(sample func() []DecommissionBlock) {
	m.Registry.MustRegister(&decommissionBlockedCollector{sample: sample,
		desc: prometheus.NewDesc("narad_decommission_blocked", "1 for each reason a draining node cannot leave yet (leader only).",
			[]string{"node", "reason"}, nil)})
}

func (c *decommissionBlockedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *decommissionBlockedCollector) Collect(ch chan<- prometheus.Metric) {
	seen := map[DecommissionBlock]bool{}
	for _, b := range c.sample() {
		if !seen[b] {
			seen[b] = true
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, b.Node, b.Reason)
		}
	}
}

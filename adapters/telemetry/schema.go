package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/narad/narad/adapters/jsonschema"
)

var _ jsonschema.Observer = (*SchemaMetrics)(nil)

// SchemaMetrics records the narad_schema_* series. It implements
// jsonschema.Observer.
type SchemaMetrics struct {
	seconds    prometheus.Histogram
	inFlight   prometheus.Gauge
	rejections *prometheus.CounterVec
}

func newSchemaMetrics(r prometheus.Registerer) *SchemaMetrics {
	s := &SchemaMetrics{
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "narad_schema_validation_seconds",
			Help:    "Validations run under the capacity bound.",
			Buckets: prometheus.ExponentialBuckets(schemaBucketStartSeconds, bucketFactor, schemaBuckets)}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "narad_schema_validations_in_flight",
			Help: "Validations running under the bound."}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "narad_schema_rejections_total",
			Help: "Payloads and schemas refused."}, []string{"reason"}),
	}
	r.MustRegister(s.seconds, s.inFlight, s.rejections)
	return s
}

// ValidationStarted implements jsonschema.Observer.
func (s *SchemaMetrics) ValidationStarted() { s.inFlight.Inc() }

// ValidationFinished implements jsonschema.Observer.
func (s *SchemaMetrics) ValidationFinished(took time.Duration) {
	s.inFlight.Dec()
	s.seconds.Observe(took.Seconds())
}

// Rejected implements jsonschema.Observer.
func (s *SchemaMetrics) Rejected(reason string) { s.rejections.WithLabelValues(reason).Inc() }

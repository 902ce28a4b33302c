package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics is the node's Prometheus registry with the narad_* series of the
// produce, consume and HTTP paths (api.md §7). It implements ports.Metrics.
type Metrics struct {
	Registry *prometheus.Registry

	produced, consumed        *flowSeries
	produceRejections         *prometheus.CounterVec
	consumeWait               *prometheus.HistogramVec
	consumeEmpty              *prometheus.CounterVec
	extended, nacked          *prometheus.CounterVec
	deadLettered              *prometheus.CounterVec
	deadLetterFailures        *prometheus.CounterVec
	redriven                  *prometheus.CounterVec
	corruptSkipped            *prometheus.CounterVec
	errors                    *prometheus.CounterVec
	httpRequests              *prometheus.CounterVec
	httpDuration              *prometheus.HistogramVec
	httpBytesIn, httpBytesOut *prometheus.CounterVec
	httpSeries                httpSeriesCache
	httpInFlight              prometheus.Gauge
	batchBudgetRejections     prometheus.Counter
	ackRejected               *prometheus.CounterVec
	storage                   *StorageMetrics
	schema                    *SchemaMetrics
	schedule                  scheduleMetrics
	clusterRPC                *ClusterRPCMetrics
	// BootSeconds is the start-up time to the listener.
	BootSeconds prometheus.Gauge
}

// NewMetrics registers every series, plus the standard go_* and process_*
// collectors, on a fresh registry.
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
		r.MustRegister(g)
		return g
	}
	m := &Metrics{Registry: r}
	m.produced = newFlowSeries(r, "narad_messages_produced_total", "Records appended, counted on the owner.",
		"narad_bytes_produced_total", "Payload bytes appended.")
	m.consumed = newFlowSeries(r, "narad_messages_consumed_total", "Messages handed to queue consumers (replays not counted).",
		"narad_bytes_consumed_total", "Payload bytes handed to queue consumers.")
	m.produceRejections = counter("narad_produce_rejections_total", "Produces refused before acceptance.", "topic", "reason")
	m.consumeEmpty = counter("narad_consume_empty_total", "Consumes that found nothing.", "topic")
	m.extended = counter("narad_ack_extended_total", "Lease extensions.", "topic")
	m.nacked = counter("narad_nack_total", "Nacks.", "topic")
	m.deadLettered = counter("narad_dead_lettered_messages_total",
		"Messages moved to the topic's dead-letter topic after its maximum receive count.", "topic")
	m.deadLetterFailures = counter("narad_dead_letter_failures_total",
		"Writes to the topic's dead-letter topic that failed; the message stays in its origin and is tried again.", "topic")
	m.redriven = counter("narad_redrive_messages_total",
		"Dead letters a redrive job produced back to their origin (or its target), by dead-letter topic.", "topic")
	m.corruptSkipped = counter("narad_consumer_corrupt_skipped_total", "Unreadable records skipped (data loss).", "topic", "partition")
	m.errors = counter("narad_errors_total", "Cross-cutting errors.", "component", "kind")
	m.httpRequests = counter("narad_http_requests_total", "HTTP requests.", "route", "method", "status")
	m.httpBytesIn = counter("narad_http_request_bytes_in_total", "Request bytes (from Content-Length).", "route")
	m.httpBytesOut = counter("narad_http_response_bytes_out_total", "Response bytes.", "route")
	m.consumeWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_consume_wait_seconds", Help: "Time spent per consume.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}, []string{"topic", "outcome"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "narad_http_request_duration_seconds", Help: "HTTP request latency.", Buckets: prometheus.DefBuckets}, []string{"route", "method", "status"})
	r.MustRegister(m.consumeWait, m.httpDuration)
	m.httpInFlight = gauge("narad_http_requests_in_flight", "Concurrent requests.")
	m.batchBudgetRejections = prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_http_batch_body_budget_rejections_total", Help: "Batch bodies over 1 MiB answered 503 because the node's budget was full."})
	r.MustRegister(m.batchBudgetRejections)
	m.BootSeconds = gauge("narad_boot_duration_seconds", "Start-up time to listener.")
	// Registered and never incremented: acks are not refused (api.md §7, v3.0).
	m.ackRejected = counter("narad_ack_rejected_total", "Acks refused (never in v3: acks are not refused).", "reason")
	m.storage = newStorageMetrics(r, m.errors)
	m.schedule = newScheduleMetrics(r)
	m.schema = newSchemaMetrics(r)
	m.clusterRPC = newClusterRPCMetrics(r)
	return m
}

// Storage returns the partition logs' observer (segmentlog.Options.Observer).
func (m *Metrics) Storage() *StorageMetrics { return m.storage }

// Schema returns the schema validator's observer (jsonschema.Options.Observer).
func (m *Metrics) Schema() *SchemaMetrics { return m.schema }

func part(p int32) string { return strconv.Itoa(int(p)) }

// MessagesProduced implements ports.Metrics.
func (m *Metrics) MessagesProduced(topic string, p int32, records, bytes int) {
	m.produced.add(topic, p, records, bytes)
}

// ProduceRejected implements ports.Metrics.
func (m *Metrics) ProduceRejected(topic, reason string) {
	m.produceRejections.WithLabelValues(topic, reason).Inc()
}

// MessagesConsumed implements ports.Metrics.
func (m *Metrics) MessagesConsumed(topic string, p int32, records, bytes int) {
	m.consumed.add(topic, p, records, bytes)
}

// ConsumeWaited implements ports.Metrics.
func (m *Metrics) ConsumeWaited(topic, outcome string, waited time.Duration) {
	m.consumeWait.WithLabelValues(topic, outcome).Observe(waited.Seconds())
	if outcome != "hit" {
		m.consumeEmpty.WithLabelValues(topic).Inc()
	}
}

// LeaseSettled implements ports.Metrics.
func (m *Metrics) LeaseSettled(topic, op string) {
	switch op {
	case "extend":
		m.extended.WithLabelValues(topic).Inc()
	case "nack":
		m.nacked.WithLabelValues(topic).Inc()
	}
}

// MessagesDeadLettered implements ports.Metrics.
func (m *Metrics) MessagesDeadLettered(topic string, n int) {
	m.deadLettered.WithLabelValues(topic).Add(float64(n))
}

// DeadLetterFailed implements ports.Metrics.
func (m *Metrics) DeadLetterFailed(topic string) {
	m.deadLetterFailures.WithLabelValues(topic).Inc()
}

// RedriveMoved implements ports.Metrics.
func (m *Metrics) RedriveMoved(topic string, n int) {
	m.redriven.WithLabelValues(topic).Add(float64(n))
}

// CorruptSkipped implements ports.Metrics.
func (m *Metrics) CorruptSkipped(topic string, p int32) {
	m.corruptSkipped.WithLabelValues(topic, part(p)).Inc()
}

// Error implements ports.Metrics.
func (m *Metrics) Error(component, kind string) { m.errors.WithLabelValues(component, kind).Inc() }

// HTTPRequest records one finished request.
func (m *Metrics) HTTPRequest(route, method string, status int, d time.Duration, bytesIn, bytesOut int64) {
	s := m.httpSeries.get(m, httpKey{route: route, method: method, status: status})
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
	if bytesIn > 0 {
		s.counter(&s.in, m.httpBytesIn).Add(float64(bytesIn))
	}
	if bytesOut > 0 {
		s.counter(&s.out, m.httpBytesOut).Add(float64(bytesOut))
	}
	if status >= 500 {
		m.Error("http", "5xx")
	}
}

// HTTPInFlight moves the in-flight gauge by delta.
func (m *Metrics) HTTPInFlight(delta int) { m.httpInFlight.Add(float64(delta)) }

// GaugeFunc registers a gauge read from fn at every scrape (a value another
// component owns, such as the WAL's latch or the open-log count).
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// CounterFunc registers a counter read from fn at every scrape.
func (m *Metrics) CounterFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn))
}

// BatchBodyBudgetRejected counts one batch body refused for the budget.
func (m *Metrics) BatchBodyBudgetRejected() { m.batchBudgetRejections.Inc() }

package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/narad/narad/adapters/segmentlog"
)

var _ segmentlog.Observer = (*StorageMetrics)(nil)

// StorageMetrics records the partition logs' narad_storage_* series and
// their narad_errors_total{component="storage"} faults. It implements
// segmentlog.Observer: every call is a label lookup and an atomic add.
type StorageMetrics struct {
	flushSeconds, fsyncSeconds *prometheus.HistogramVec
	flushBytes                 *prometheus.CounterVec
	hwmSeconds                 *prometheus.HistogramVec
	retentionBytes             *prometheus.CounterVec
	retentionMessages          *prometheus.CounterVec
	retentionRunSeconds        *prometheus.HistogramVec
	errors                     *prometheus.CounterVec
}

func newStorageMetrics(r prometheus.Registerer, errors *prometheus.CounterVec) *StorageMetrics {
	tp := []string{"topic", "partition"}
	hist := func(name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		r.MustRegister(h)
		return h
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}
	io := prometheus.ExponentialBuckets(storageIOBucketStartSeconds, bucketFactor, storageIOBuckets)
	return &StorageMetrics{
		flushSeconds:        hist("narad_storage_flush_duration_seconds", "Time to encode and write one drain of buffered records.", io, tp),
		fsyncSeconds:        hist("narad_storage_fsync_duration_seconds", "Time of one fsync of the active segment on the commit path.", io, tp),
		flushBytes:          counter("narad_storage_flush_bytes_total", "Frame bytes written to segments.", tp),
		hwmSeconds:          hist("narad_storage_high_watermark_persist_duration_seconds", "hwm file writes (at most once per log open and once per close).", io, []string{"topic", "partition", "outcome"}),
		retentionBytes:      counter("narad_storage_retention_bytes_deleted_total", "Segment bytes deleted by retention.", []string{"topic", "partition", "reason"}),
		retentionMessages:   counter("narad_storage_retention_messages_deleted_total", "Records deleted by retention.", []string{"topic", "partition", "reason"}),
		retentionRunSeconds: hist("narad_storage_retention_run_duration_seconds", "Time of one reaper pass over a partition.", io, tp),
		errors:              errors,
	}
}

// Flushed implements segmentlog.Observer.
func (s *StorageMetrics) Flushed(topic string, p int32, bytes int64, took time.Duration) {
	s.flushSeconds.WithLabelValues(topic, part(p)).Observe(took.Seconds())
	s.flushBytes.WithLabelValues(topic, part(p)).Add(float64(bytes))
}

// Fsynced implements segmentlog.Observer.
func (s *StorageMetrics) Fsynced(topic string, p int32, took time.Duration) {
	s.fsyncSeconds.WithLabelValues(topic, part(p)).Observe(took.Seconds())
}

// HighWatermarkPersisted implements segmentlog.Observer.
func (s *StorageMetrics) HighWatermarkPersisted(topic string, p int32, took time.Duration, err error) {
	outcome := outcomeOK
	if err != nil {
		outcome = outcomeError
	}
	s.hwmSeconds.WithLabelValues(topic, part(p), outcome).Observe(took.Seconds())
}

// RetentionDeleted implements segmentlog.Observer; the store deletes by age
// only, so the reason is always "age".
func (s *StorageMetrics) RetentionDeleted(topic string, p int32, bytes, messages int64) {
	s.retentionBytes.WithLabelValues(topic, part(p), reasonAge).Add(float64(bytes))
	s.retentionMessages.WithLabelValues(topic, part(p), reasonAge).Add(float64(messages))
}

// RetentionRun implements segmentlog.Observer.
func (s *StorageMetrics) RetentionRun(topic string, p int32, took time.Duration) {
	s.retentionRunSeconds.WithLabelValues(topic, part(p)).Observe(took.Seconds())
}

// StorageError implements segmentlog.Observer.
func (s *StorageMetrics) StorageError(kind string) {
	s.errors.WithLabelValues(componentStorage, kind).Inc()
}

// Closed implements segmentlog.Observer: the partition's storage series go
// with its log (exact label values, so each delete is one lookup), so a
// node's series follow its open logs, not every partition it ever wrote.
// Counters start again from zero when the log reopens, which rate() reads
// as a reset.
func (s *StorageMetrics) Closed(topic string, p int32) {
	ps := part(p)
	s.flushSeconds.DeleteLabelValues(topic, ps)
	s.fsyncSeconds.DeleteLabelValues(topic, ps)
	s.flushBytes.DeleteLabelValues(topic, ps)
	s.retentionRunSeconds.DeleteLabelValues(topic, ps)
	for _, o := range []string{outcomeOK, outcomeError} {
		s.hwmSeconds.DeleteLabelValues(topic, ps, o)
	}
	s.retentionBytes.DeleteLabelValues(topic, ps, reasonAge)
	s.retentionMessages.DeleteLabelValues(topic, ps, reasonAge)
}

package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/narad/narad/adapters/segmentlog"
)

var _ segmentlog.Observer = (*StorageMetrics)(nil)

// StorageMetrics records the partition logs' narad_storage_* series and
// their narad_errors_total{component="storage"} faults. It implements
// segmentlog.Observer: every call is a map lookup and a short, per-partition
// critical section.
//
// The series are labelled by partition (api.md §7) and a node keeps them for
// every open log, so they are held compactly (storageSeries, about a tenth
// of client_golang's histograms and counters) and built into const metrics
// at scrape time. A series appears once first observed, as with a vector.
type StorageMetrics struct {
	parts  sync.Map // partKey → *storageSeries
	io     []float64
	errors *prometheus.CounterVec

	flushSeconds, fsyncSeconds, hwmSeconds, retentionRunSeconds *prometheus.Desc
	flushBytes, retentionBytes, retentionMessages               *prometheus.Desc
}

type partKey struct {
	topic     string
	partition int32
}

func newStorageMetrics(r prometheus.Registerer, errors *prometheus.CounterVec) *StorageMetrics {
	tp := []string{"topic", "partition"}
	s := &StorageMetrics{
		io:                  prometheus.ExponentialBuckets(storageIOBucketStartSeconds, bucketFactor, storageIOBuckets),
		errors:              errors,
		flushSeconds:        prometheus.NewDesc("narad_storage_flush_duration_seconds", "Time to encode and write one drain of buffered records.", tp, nil),
		fsyncSeconds:        prometheus.NewDesc("narad_storage_fsync_duration_seconds", "Time of one fsync of the active segment on the commit path.", tp, nil),
		flushBytes:          prometheus.NewDesc("narad_storage_flush_bytes_total", "Frame bytes written to segments.", tp, nil),
		hwmSeconds:          prometheus.NewDesc("narad_storage_high_watermark_persist_duration_seconds", "hwm file writes (at most once per log open and once per close).", []string{"topic", "partition", "outcome"}, nil),
		retentionBytes:      prometheus.NewDesc("narad_storage_retention_bytes_deleted_total", "Segment bytes deleted by retention.", []string{"topic", "partition", "reason"}, nil),
		retentionMessages:   prometheus.NewDesc("narad_storage_retention_messages_deleted_total", "Records deleted by retention.", []string{"topic", "partition", "reason"}, nil),
		retentionRunSeconds: prometheus.NewDesc("narad_storage_retention_run_duration_seconds", "Time of one reaper pass over a partition.", tp, nil),
	}
	r.MustRegister(s)
	return s
}

// series returns the partition's series, creating them on first use.
func (s *StorageMetrics) series(topic string, p int32) *storageSeries {
	k := partKey{topic: topic, partition: p}
	if v, ok := s.parts.Load(k); ok {
		return v.(*storageSeries)
	}
	v, _ := s.parts.LoadOrStore(k, &storageSeries{})
	return v.(*storageSeries)
}

// Flushed implements segmentlog.Observer.
func (s *StorageMetrics) Flushed(topic string, p int32, bytes int64, took time.Duration) {
	ps := s.series(topic, p)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.flush.observe(s.io, took.Seconds())
	ps.flushBytes.add(float64(bytes))
}

// Fsynced implements segmentlog.Observer.
func (s *StorageMetrics) Fsynced(topic string, p int32, took time.Duration) {
	ps := s.series(topic, p)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.fsync.observe(s.io, took.Seconds())
}

// HighWatermarkPersisted implements segmentlog.Observer.
func (s *StorageMetrics) HighWatermarkPersisted(topic string, p int32, took time.Duration, err error) {
	ps := s.series(topic, p)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if err != nil {
		ps.hwmError.observe(s.io, took.Seconds())
	} else {
		ps.hwmOK.observe(s.io, took.Seconds())
	}
}

// RetentionDeleted implements segmentlog.Observer; the store deletes by age
// only, so the reason is always "age".
func (s *StorageMetrics) RetentionDeleted(topic string, p int32, bytes, messages int64) {
	ps := s.series(topic, p)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.retentionBytes.add(float64(bytes))
	ps.retentionMessages.add(float64(messages))
}

// RetentionRun implements segmentlog.Observer.
func (s *StorageMetrics) RetentionRun(topic string, p int32, took time.Duration) {
	ps := s.series(topic, p)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.retentionRun.observe(s.io, took.Seconds())
}

// StorageError implements segmentlog.Observer.
func (s *StorageMetrics) StorageError(kind string) {
	s.errors.WithLabelValues(componentStorage, kind).Inc()
}

// Closed implements segmentlog.Observer: the partition's storage series go
// with its log, so a node's series follow its open logs, not every
// partition it ever wrote. Counters start again from zero when the log
// reopens, which rate() reads as a reset.
func (s *StorageMetrics) Closed(topic string, p int32) {
	s.parts.Delete(partKey{topic: topic, partition: p})
}

// Describe implements prometheus.Collector.
func (s *StorageMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{s.flushSeconds, s.fsyncSeconds, s.flushBytes, s.hwmSeconds,
		s.retentionBytes, s.retentionMessages, s.retentionRunSeconds} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: every partition's series that
// were observed, as const metrics.
func (s *StorageMetrics) Collect(ch chan<- prometheus.Metric) {
	s.parts.Range(func(k, v any) bool {
		key, ps := k.(partKey), v.(*storageSeries)
		ps.mu.Lock()
		snap := ps.storageCounts
		ps.mu.Unlock()
		snap.emit(ch, s, key.topic, part(key.partition))
		return true
	})
}

package telemetry

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// storageSeries is one partition's narad_storage_* series. client_golang's
// vectors keep about a kilobyte per histogram child (hot and cold count
// arrays, native-histogram state, label pairs); these are plain counts.
type storageSeries struct {
	mu sync.Mutex
	storageCounts
}

// storageCounts is what a scrape copies out of a storageSeries.
type storageCounts struct {
	flush, fsync, hwmOK, hwmError, retentionRun   compactHistogram
	flushBytes, retentionBytes, retentionMessages compactCounter
}

// compactHistogram counts observations per bucket of a fixed layout
// (storageIOBuckets upper bounds, the last bucket +Inf implied).
type compactHistogram struct {
	buckets [storageIOBuckets]uint64 // not cumulative
	count   uint64
	sum     float64
}

func (h *compactHistogram) observe(bounds []float64, v float64) {
	for i, b := range bounds {
		if v <= b {
			h.buckets[i]++
			break
		}
	}
	h.count++
	h.sum += v
}

// metric builds the const histogram, or nil when nothing was observed (the
// series does not exist yet, as with a vector's child).
func (h *compactHistogram) metric(d *prometheus.Desc, bounds []float64, labels ...string) prometheus.Metric {
	if h.count == 0 {
		return nil
	}
	cum := make(map[float64]uint64, len(bounds))
	var run uint64
	for i, b := range bounds {
		run += h.buckets[i]
		cum[b] = run
	}
	return prometheus.MustNewConstHistogram(d, h.count, h.sum, cum, labels...)
}

// compactCounter is a counter that exists once first added to.
type compactCounter struct {
	v    float64
	used bool
}

func (c *compactCounter) add(v float64) { c.v, c.used = c.v+v, true }

func (c *compactCounter) metric(d *prometheus.Desc, labels ...string) prometheus.Metric {
	if !c.used {
		return nil
	}
	return prometheus.MustNewConstMetric(d, prometheus.CounterValue, c.v, labels...)
}

// emit sends the partition's observed series.
func (c *storageCounts) emit(ch chan<- prometheus.Metric, s *StorageMetrics, topic, p string) {
	for _, m := range []prometheus.Metric{
		c.flush.metric(s.flushSeconds, s.io, topic, p),
		c.fsync.metric(s.fsyncSeconds, s.io, topic, p),
		c.hwmOK.metric(s.hwmSeconds, s.io, topic, p, outcomeOK),
		c.hwmError.metric(s.hwmSeconds, s.io, topic, p, outcomeError),
		c.retentionRun.metric(s.retentionRunSeconds, s.io, topic, p),
		c.flushBytes.metric(s.flushBytes, topic, p),
		c.retentionBytes.metric(s.retentionBytes, topic, p, reasonAge),
		c.retentionMessages.metric(s.retentionMessages, topic, p, reasonAge),
	} {
		if m != nil {
			ch <- m
		}
	}
}

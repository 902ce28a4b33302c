package telemetry

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// flowSeries is one direction's per-partition message and byte counters
// (narad_messages_produced_total with narad_bytes_produced_total, or the
// consumed pair). A node keeps them for every partition it ever wrote or
// served, idle ones included, so they are held as two integers per
// partition (about a quarter of what a pair of client_golang vector
// children takes: their label pairs, created time and descriptors) and
// built into const metrics at scrape time. A partition's series appear
// once it is first counted, as with a vector.
type flowSeries struct {
	messages, bytes *prometheus.Desc
	parts           sync.Map // partKey → *flowCount
}

type flowCount struct{ messages, bytes atomic.Uint64 }

func newFlowSeries(r prometheus.Registerer, messagesName, messagesHelp, bytesName, bytesHelp string) *flowSeries {
	tp := []string{"topic", "partition"}
	f := &flowSeries{
		messages: prometheus.NewDesc(messagesName, messagesHelp, tp, nil),
		bytes:    prometheus.NewDesc(bytesName, bytesHelp, tp, nil),
	}
	r.MustRegister(f)
	return f
}

// add counts records and bytes for topic's partition p.
func (f *flowSeries) add(topic string, p int32, records, bytes int) {
	k := partKey{topic: topic, partition: p}
	v, ok := f.parts.Load(k)
	if !ok {
		v, _ = f.parts.LoadOrStore(k, &flowCount{})
	}
	c := v.(*flowCount)
	c.messages.Add(uint64(max(records, 0)))
	c.bytes.Add(uint64(max(bytes, 0)))
}

// Describe implements prometheus.Collector.
func (f *flowSeries) Describe(ch chan<- *prometheus.Desc) {
	ch <- f.messages
	ch <- f.bytes
}

// Collect implements prometheus.Collector.
func (f *flowSeries) Collect(ch chan<- prometheus.Metric) {
	f.parts.Range(func(key, value any) bool {
		k, c := key.(partKey), value.(*flowCount)
		p := part(k.partition)
		ch <- prometheus.MustNewConstMetric(f.messages, prometheus.CounterValue, float64(c.messages.Load()), k.topic, p)
		ch <- prometheus.MustNewConstMetric(f.bytes, prometheus.CounterValue, float64(c.bytes.Load()), k.topic, p)
		return true
	})
}

package telemetry

import (
	"errors"
	"testing"
	"time"
)

// BenchmarkStorageObserveCommit is what every segment commit pays to the
// storage series: one flush and one fsync observation.
func BenchmarkStorageObserveCommit(b *testing.B) {
	s := NewMetrics().Storage()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := int32(i % 64)
		s.Flushed("orders", p, 4096, 300*time.Microsecond)
		s.Fsynced("orders", p, 2*time.Millisecond)
	}
}

// BenchmarkStorageSeriesPerPartition is the memory one newly written
// partition's series take (B/op): its first flush, fsync, hwm writes and
// reaper pass.
func BenchmarkStorageSeriesPerPartition(b *testing.B) {
	s := NewMetrics().Storage()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p := int32(i)
		s.Flushed("orders", p, 4096, 300*time.Microsecond)
		s.Fsynced("orders", p, 2*time.Millisecond)
		s.HighWatermarkPersisted("orders", p, time.Millisecond, nil)
		s.HighWatermarkPersisted("orders", p, time.Millisecond, errors.New("disk"))
		s.RetentionRun("orders", p, time.Millisecond)
	}
}

// BenchmarkFlowSeriesPerPartition is the memory one newly produced-to and
// consumed-from partition's message and byte counters take (B/op).
func BenchmarkFlowSeriesPerPartition(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.MessagesProduced("orders", int32(i), 1, 256)
		m.MessagesConsumed("orders", int32(i), 1, 256)
	}
}

// BenchmarkFlowSeriesAdd is what a produce pays to count itself on a
// partition already counted.
func BenchmarkFlowSeriesAdd(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.MessagesProduced("orders", int32(i%64), 1, 256)
	}
}

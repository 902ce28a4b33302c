package segmentlog

import (
	"context"
	"testing"

	"github.com/narad/narad/adapters/vfs"
)

// BenchmarkScheduleAppend schedules batches of 100 records of 256 B into
// one bucket, as a steady stream of equal delays does: the cost per batch
// must not grow with what the bucket already holds.
func BenchmarkScheduleAppend(b *testing.B) {
	s := mustOpen(b, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	recs := scheduled(1, 100, 1_800_000_000_000, 1)
	for i := range recs {
		recs[i].Payload = make([]byte, 256)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(recs) * 256))
	for b.Loop() {
		if err := s.Schedule(context.Background(), ref, recs); err != nil {
			b.Fatal(err)
		}
	}
}

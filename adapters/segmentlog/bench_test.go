package segmentlog

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

const (
	benchBatchRecords = 64
	benchPayloadBytes = 256
)

// jsonPayload is a compressible, JSON-like payload of exactly n bytes.
func jsonPayload(i, n int) []byte {
	p := fmt.Appendf(nil, `{"id":%d,"user":"user-%d","event":"page_view","ts":%d,"props":{"path":"/products/%d","ref":"search","ua":"Mozilla/5.0 (X11; Linux x86_64)"},"pad":"`,
		i, i%97, 1_700_000_000_000+int64(i), i%1000)
	for len(p) < n-2 {
		p = append(p, 'a'+byte(i%26))
	}
	return append(p[:n-2], '"', '}')
}

func benchBatch(seed int) []domain.Record {
	recs := make([]domain.Record, benchBatchRecords)
	for i := range recs {
		k := seed*benchBatchRecords + i
		recs[i] = domain.Record{Key: fmt.Appendf(nil, "user-%d", k%97), Payload: jsonPayload(k, benchPayloadBytes)}
	}
	return recs
}

func benchStore(b *testing.B, dir string, codec Codec) *Store {
	b.Helper()
	s, err := Open(Options{FS: vfs.OS{}, DataDir: dir, Codec: codec})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCommitDurable commits 64-record batches of 256-byte JSON-like
// payloads on the OS filesystem: one fsync and read-back per commit.
func BenchmarkCommitDurable(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			s := benchStore(b, b.TempDir(), codec)
			defer func() { _ = s.Close() }()
			ref := domain.PartitionRef{Topic: "bench", Partition: 0}
			batches := make([][]domain.Record, 16)
			for i := range batches {
				batches[i] = benchBatch(i)
			}
			if _, err := s.CommitDurable(context.Background(), ref, batches[0]); err != nil {
				b.Fatal(err) // open the log outside the timer
			}
			b.ReportAllocs()
			b.SetBytes(benchBatchRecords * benchPayloadBytes)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.CommitDurable(context.Background(), ref, batches[i%len(batches)]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			records := float64(b.N * benchBatchRecords)
			b.ReportMetric(records/elapsed.Seconds(), "records/s")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/records, "allocs/record")
		})
	}
}

// BenchmarkSequentialRead reads back, 1,000 records per call, a log of
// 64,000 such records written beforehand, from a freshly opened store.
func BenchmarkSequentialRead(b *testing.B) {
	const total, perRead = 64_000, 1000
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			dir := b.TempDir()
			s := benchStore(b, dir, codec)
			ref := domain.PartitionRef{Topic: "bench", Partition: 0}
			for i := range total / benchBatchRecords {
				if _, err := s.CommitDurable(context.Background(), ref, benchBatch(i)); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			s = benchStore(b, dir, codec)
			defer func() { _ = s.Close() }()
			b.ReportAllocs()
			b.SetBytes(perRead * benchPayloadBytes)
			b.ResetTimer()
			start, read := time.Now(), 0
			for i := range b.N {
				from := int64(i*perRead) % total
				recs, err := s.Read(context.Background(), ref, from, perRead, 0)
				if err != nil || len(recs) != perRead {
					b.Fatalf("read at %d: %d records, %v", from, len(recs), err)
				}
				read += len(recs)
			}
			b.ReportMetric(float64(read)/time.Since(start).Seconds(), "records/s")
		})
	}
}

// BenchmarkTailRead reads 100 records at a time from offsets inside frames
// of 16 records (a produce batch spread over a few partitions) that were
// written while a reader followed the tail, so every frame was cached as
// written: the way queue consumers read right behind producers, from
// reserved offsets that rarely start a frame.
func BenchmarkTailRead(b *testing.B) {
	const frames, frameRecords, perRead = frameCacheFramesMax, 16, 100
	s := benchStore(b, b.TempDir(), CodecNone)
	defer func() { _ = s.Close() }()
	ref := domain.PartitionRef{Topic: "bench", Partition: 0}
	ctx := context.Background()
	for i := range frames {
		first, err := s.CommitDurable(ctx, ref, benchBatch(i)[:frameRecords])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Read(ctx, ref, first, 1, 0); err != nil { // the tail reader
			b.Fatal(err)
		}
	}
	total := int64(frames * frameRecords)
	b.ReportAllocs()
	b.SetBytes(perRead * benchPayloadBytes)
	b.ResetTimer()
	for i := range b.N {
		from := int64(i*37+11) % (total - perRead)
		recs, err := s.Read(ctx, ref, from, perRead, 0)
		if err != nil || len(recs) != perRead {
			b.Fatalf("read at %d: %d records, %v", from, len(recs), err)
		}
	}
	b.ReportMetric(float64(b.N*perRead)/b.Elapsed().Seconds(), "records/s")
}

package wal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// BenchmarkAppend measures group commit on the real filesystem: appenders
// concurrent Append calls of 256-byte payloads, reporting records/s and
// fsyncs/record (segment fsyncs counted through a vfs hook).
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, n) })
	}
}

func benchAppend(b *testing.B, appenders int) {
	var syncs atomic.Int64
	count := func(op vfs.Op, name string) error {
		if op == vfs.OpSync && filepath.Ext(name) == segmentFileSuffix {
			syncs.Add(1)
		}
		return nil
	}
	w, err := Open(Options{FS: vfs.Inject(vfs.OS{}, count), Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := domain.IngressRecord{Topic: "bench", TopicID: "0123456789abcdef", Key: []byte("key-0001"),
		Partition: 1, CreatedAtMs: 1_700_000_000_000, Payload: make([]byte, 256)}
	b.SetBytes(int64(frameHeaderBytes + recordSize(rec)))
	b.ReportAllocs()
	syncs.Store(0)
	var issued atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range appenders {
		wg.Go(func() {
			for issued.Add(1) <= int64(b.N) {
				if _, err := w.Append(context.Background(), rec); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "fsyncs/record")
}

// BenchmarkAppendMany measures batches of 100 records from 16 appenders.
func BenchmarkAppendMany(b *testing.B) {
	w, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	recs := make([]domain.IngressRecord, 100)
	for i := range recs {
		recs[i] = domain.IngressRecord{Topic: "bench", Partition: int32(i), Payload: make([]byte, 256)}
	}
	b.ReportAllocs()
	var issued atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 16 {
		wg.Go(func() {
			for issued.Add(1) <= int64(b.N) {
				if _, err := w.AppendMany(context.Background(), recs); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N*len(recs))/time.Since(start).Seconds(), "records/s")
}

// BenchmarkReadFrom measures reading durable records back in batches of 256.
func BenchmarkReadFrom(b *testing.B) {
	w, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	recs := make([]domain.IngressRecord, 4096)
	for i := range recs {
		recs[i] = domain.IngressRecord{Topic: "bench", Key: []byte("k"), Payload: make([]byte, 256)}
	}
	if _, err := w.AppendMany(context.Background(), recs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		from := uint64(i*256) % uint64(len(recs))
		if got, err := w.ReadFrom(from, 256); err != nil || len(got) != 256 {
			b.Fatalf("ReadFrom(%d) = %d entries, %v", from, len(got), err)
		}
	}
	b.ReportMetric(float64(b.N*256)/b.Elapsed().Seconds(), "records/s")
}

package wal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// BenchmarkAppend measures group commit on the real filesystem: appenders
// concurrent Append calls of 256-byte payloads, reporting records/s,
// fsyncs/record (segment fsyncs counted through a vfs hook) and the process
// CPU time (user+sys, every goroutine) per fsync. With prealloc=on the WAL
// writes into a prepared segment from the start (steady state of the option).
func BenchmarkAppend(b *testing.B) {
	for _, prealloc := range []bool{false, true} {
		for _, n := range []int{1, 16, 64, 256} {
			b.Run(fmt.Sprintf("prealloc=%s/appenders=%d", onOff(prealloc), n), func(b *testing.B) { benchAppend(b, n, prealloc) })
		}
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// benchDir returns a WAL directory, holding a prepared segment 0 when
// prealloc is set.
func benchDir(b *testing.B, prealloc bool) string {
	dir := b.TempDir()
	if !prealloc {
		return dir
	}
	p := newPreparer(vfs.OS{}, dir, segmentSizeMaxBytes, true)
	if err := p.prepare(); err != nil {
		b.Fatal(err)
	}
	f, err := installPrepared(vfs.OS{}, dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// cpuTime is the process's user+sys CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchAppend(b *testing.B, appenders int, prealloc bool) {
	var syncs atomic.Int64
	count := func(op vfs.Op, name string) error {
		if op == vfs.OpSync && filepath.Ext(name) == segmentFileSuffix {
			syncs.Add(1)
		}
		return nil
	}
	w, err := Open(Options{FS: vfs.Inject(vfs.OS{}, count), Dir: benchDir(b, prealloc), Prealloc: prealloc})
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
	start, cpu0 := time.Now(), cpuTime(b)
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
	elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(syncs.Load())/float64(b.N), "fsyncs/record")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(syncs.Load(), 1)), "cpu-µs/fsync")
}

// BenchmarkAppendMany measures batches of 100 records from 16 appenders.
func BenchmarkAppendMany(b *testing.B) {
	for _, prealloc := range []bool{false, true} {
		b.Run("prealloc="+onOff(prealloc), func(b *testing.B) { benchAppendMany(b, prealloc) })
	}
}

func benchAppendMany(b *testing.B, prealloc bool) {
	w, err := Open(Options{Dir: benchDir(b, prealloc), Prealloc: prealloc})
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
func BenchmarkReadFrom(b *testing.B) { benchReadFrom(b, 256) }

// BenchmarkReadFromSmall reads like the dispatcher on every wake: 8 records
// a call, following the sequence, from the active segment.
func BenchmarkReadFromSmall(b *testing.B) { benchReadFrom(b, 8) }

// benchReadFrom reads 4,096 durable records back, chunk at a time, in
// sequence order and round again.
func benchReadFrom(b *testing.B, chunk int) {
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
		from := uint64(i*chunk) % uint64(len(recs))
		if got, err := w.ReadFrom(from, chunk); err != nil || len(got) != chunk {
			b.Fatalf("ReadFrom(%d) = %d entries, %v", from, len(got), err)
		}
	}
	b.ReportMetric(float64(b.N*chunk)/b.Elapsed().Seconds(), "records/s")
}

package vfs

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// usage is this process's CPU time and thread switches so far.
func usage(b *testing.B) (cpu time.Duration, switches int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}

// BenchmarkFdatasync compares a 4 KiB write plus fdatasync through the ring
// with the plain system call, from 1 and from 8 goroutines at once (each
// on a file of its own), with the process's CPU time (cpu-ns/op, the
// kernel's io_uring workers included) and thread switches (switches/op)
// per sync. The ring's gain on a busy node is in the runtime's scheduling
// around a blocking system call, which an idle benchmark does not show
// (doc.go); this benchmark shows what the ring itself costs.
func BenchmarkFdatasync(b *testing.B) {
	buf := make([]byte, 4096)
	for _, par := range []int{1, 8} {
		for _, mode := range []string{"direct", "ring"} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, par), func(b *testing.B) {
				var r *ring
				if mode == "ring" {
					r = testRing(b, uringEntriesCount)
				}
				var n atomic.Int64
				b.SetParallelism(par)
				b.ResetTimer()
				cpu0, sw0 := usage(b)
				b.RunParallel(func(pb *testing.PB) {
					f := tempFile(b, fmt.Sprintf("f%d", n.Add(1)))
					var off int64
					for pb.Next() {
						if _, err := f.WriteAt(buf, off); err != nil {
							b.Error(err)
							return
						}
						off += int64(len(buf))
						var err error
						if r != nil {
							err = syncThrough(r, f.Fd())
						} else {
							err = fdatasyncFD(f.Fd())
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
				cpu1, sw1 := usage(b)
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(sw1-sw0)/float64(b.N), "switches/op")
			})
		}
	}
}

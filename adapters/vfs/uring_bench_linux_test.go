package vfs

import (
	"fmt"
	"os"
	"runtime"
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
// with the plain system call and with the path File.Sync takes (auto,
// syncOverlapping), from 1 goroutine and from 8 per processor at once
// (each on a file of its own), with the process's CPU time (cpu-ns/op, the
// kernel's io_uring workers included) and thread switches (switches/op)
// per sync. The ring's gain on a busy node is in the runtime's scheduling
// around a blocking system call, which an idle benchmark does not show
// (doc.go); this benchmark shows what the ring itself costs.
func BenchmarkFdatasync(b *testing.B) {
	for _, goroutines := range []int{1, 8 * runtime.GOMAXPROCS(0)} {
		for _, mode := range []string{"direct", "ring", "auto"} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", mode, goroutines), func(b *testing.B) {
				var r *ring
				if mode != "direct" {
					r = testRing(b, uringEntriesCount)
				}
				var n atomic.Int64
				loop := func(next func() bool) {
					f := tempFile(b, fmt.Sprintf("f%d", n.Add(1)))
					if err := writeAndSync(f, r, mode, next); err != nil {
						b.Error(err)
					}
				}
				b.ResetTimer()
				cpu0, sw0 := usage(b)
				if goroutines == 1 {
					i := 0
					loop(func() bool { i++; return i <= b.N })
				} else {
					b.SetParallelism(goroutines / runtime.GOMAXPROCS(0))
					b.RunParallel(func(pb *testing.PB) { loop(pb.Next) })
				}
				cpu1, sw1 := usage(b)
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				b.ReportMetric(float64(sw1-sw0)/float64(b.N), "switches/op")
			})
		}
	}
}

// writeAndSync writes 4 KiB to f and syncs it by mode until next says stop.
func writeAndSync(f *os.File, r *ring, mode string, next func() bool) error {
	buf := make([]byte, 4096)
	var off int64
	for next() {
		if _, err := f.WriteAt(buf, off); err != nil {
			return err
		}
		off += int64(len(buf))
		var err error
		switch mode {
		case "ring":
			err = syncThrough(r, f.Fd())
		case "auto":
			err = syncOverlapping(r, f.Fd())
		default:
			err = fdatasyncFD(f.Fd())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

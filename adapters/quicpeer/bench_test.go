package quicpeer

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCommitLikeCall measures a commit-like RPC over real QUIC on
// loopback: a ~1.5 KB request (five 300-byte records), a tiny reply, a
// handler that returns at once, 16 callers at a time. cpu-ns/op is the
// process's CPU (both ends: client and server live in this process) per
// call, the cost the lane-pooled streams of internals.md §10.1 aim at.
func BenchmarkCommitLikeCall(b *testing.B) {
	s, _ := newServer(b, ServerOptions{})
	s.Handle(OpCommitProduceBatch, func(context.Context, []byte) ([]byte, error) { return okReply(nil), nil })
	c, _ := newClient(b, secretA)
	addr := s.Addr().String()
	req := bytes.Repeat([]byte{0x5a}, 1500)
	if _, err := c.Call(context.Background(), addr, OpCommitProduceBatch, req); err != nil {
		b.Fatal(err)
	}
	const callers = 16
	var failures atomic.Int64
	b.SetParallelism((callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Call(context.Background(), addr, OpCommitProduceBatch, req); err != nil {
				failures.Add(1)
			}
		}
	})
	used := cpuTime(b) - start
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d calls failed", n)
	}
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

package quicpeer

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
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

// benchCallers is how many callers the call benchmarks run at a time.
const benchCallers = 16

// parallelCPU runs call b.N times from benchCallers goroutines and returns
// the process's CPU time spent meanwhile; any failed call fails b.
func parallelCPU(b *testing.B, call func() error) time.Duration {
	b.Helper()
	var failures atomic.Int64
	b.SetParallelism((benchCallers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := call(); err != nil {
				failures.Add(1)
			}
		}
	})
	used := cpuTime(b) - start
	b.StopTimer()
	if n := failures.Load(); n > 0 {
		b.Fatalf("%d calls failed", n)
	}
	return used
}

// commitLikeCall starts a server whose commit handler answers at once and
// a client, makes one call of a request of size bytes (dial and stream
// open done), and returns the call for a benchmark to repeat.
func commitLikeCall(b *testing.B, size int) func() error {
	b.Helper()
	s, _ := newServer(b, ServerOptions{})
	s.Handle(OpCommitProduceBatch, func(context.Context, []byte) ([]byte, error) { return okReply(nil), nil })
	c, _ := newClient(b, secretA)
	addr := s.Addr().String()
	req := bytes.Repeat([]byte{0x5a}, size)
	call := func() error {
		_, err := c.Call(context.Background(), addr, OpCommitProduceBatch, req)
		return err
	}
	if err := call(); err != nil {
		b.Fatal(err)
	}
	return call
}

// BenchmarkCommitLikeCall measures a commit-like RPC over real QUIC on
// loopback: a ~1.5 KB request (five 300-byte records), a tiny reply, a
// handler that returns at once, 16 callers at a time. cpu-ns/op is the
// process's CPU (both ends: client and server live in this process) per
// call, the cost the lane-pooled streams of internals.md §10.1 aim at.
func BenchmarkCommitLikeCall(b *testing.B) {
	call := commitLikeCall(b, 1500)
	used := parallelCPU(b, call)
	b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// sparseCallGap is the pause between two calls of BenchmarkSparseCall:
// about what separates one owner's calls from one node at 1,000 messages
// a second on three nodes.
const sparseCallGap = time.Millisecond

// BenchmarkSparseCall measures the commit-like call of
// BenchmarkCommitLikeCall (a 300-byte request this time) made by one
// caller with a pause between calls, as node-to-node calls go at a modest
// load: no other call shares a packet, a wake-up or a system call with
// it. cpu-ns/op is the process's CPU (both ends) per call with the CPU of
// as many bare pauses, measured first, taken off; pause-cpu-ns is that
// pause's own cost. Run it with a fixed count (-benchtime 3000x): each
// call waits sparseCallGap.
func BenchmarkSparseCall(b *testing.B) {
	sparseCPU(b, commitLikeCall(b, 300))
}

// BenchmarkSparseSettle measures one forwarded ack (SettleRemote of one
// handle through the ack lane, op 3, to an owner whose settle returns at
// once) made as BenchmarkSparseCall makes its calls: one caller, a pause
// between acks, the pauses' CPU taken off. Run it with a fixed count.
//
// A lone ack flying on its caller's goroutine instead of one started for
// it, three alternated runs each of go test -run '^$' -bench
// SparseSettle -benchtime 2000x -cpu 2 on the shared 2-core machine in a
// slow hour (2026-12-06):
//
//	arm                 cpu-ns/op                  B/op   allocs/op
//	goroutine (before)  285,214  197,016  193,122  3,390  62
//	caller's (now)      213,586  180,338  191,110  2,868  54
func BenchmarkSparseSettle(b *testing.B) {
	p := ackCaller(b, ackOwner(b, &fakeService{}, false), noObserver{})
	h := []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}
	sparseCPU(b, func() error {
		errs, err := p.SettleRemote(context.Background(), "owner", "t", h, ports.SettleAck)
		if err == nil {
			err = errs[0]
		}
		return err
	})
}

// sparseCPU runs call b.N times with sparseCallGap after each and reports
// the process's CPU per call less that of as many bare pauses.
func sparseCPU(b *testing.B, call func() error) {
	start := cpuTime(b)
	for range b.N {
		time.Sleep(sparseCallGap)
	}
	pauses := cpuTime(b) - start
	b.ReportAllocs()
	b.ResetTimer()
	start = cpuTime(b)
	for range b.N {
		if err := call(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(sparseCallGap)
	}
	used := cpuTime(b) - start
	b.StopTimer()
	b.ReportMetric(float64((used-pauses).Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(pauses.Nanoseconds())/float64(b.N), "pause-cpu-ns")
}

// instantCommitter commits every batch at once at offset 0.
type instantCommitter struct{}

func (instantCommitter) CommitBatch(context.Context, ports.CommitRequest) (int64, error) {
	return 0, nil
}

// BenchmarkCommitGroupVersusSingles measures four batches committed over
// real QUIC on loopback through Peers and RegisterCommit (encoding and
// decoding included), each batch five 300-byte records to an owner that
// commits at once, 16 callers at a time: as four op-11 calls (CommitBatch
// each, one after the other) against one op-37 call (CommitBatches).
// cpu-ns/batch is the process's CPU (both ends) per batch.
//
// Measured on the shared 2-core development machine, two runs of go test
// -run '^$' -bench CommitGroupVersusSingles -benchtime 2s -count 3
// (GOMAXPROCS 2; the machine's other load moves the absolute figures by a
// third between runs, the ratio much less):
//
//	run  arm     cpu-ns/batch   ns/batch       B/batch  allocs/batch
//	1    op11x4  61,800-75,100  34,400-41,300  8,340    66
//	1    op37x1  28,100-30,600  15,700-17,100  7,160    45
//	2    op11x4  46,300-61,300  26,700-33,700  8,340    66
//	2    op37x1  29,300-31,600  16,300-17,400  7,170    45
//
// One op-37 call costs about half the CPU per batch of op-11 calls (the
// medians 2.2 and 2.0 times less), half the wall time, and a third fewer
// allocations.
func BenchmarkCommitGroupVersusSingles(b *testing.B) {
	const batches = 4
	srv, _ := newServer(b, ServerOptions{})
	RegisterCommit(srv, instantCommitter{})
	c, _ := newClient(b, secretA)
	p := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	reqs := make([]ports.CommitRequest, batches)
	for i := range reqs {
		reqs[i] = ports.CommitRequest{Topic: "orders", TopicID: "0123456789abcdef", Partition: int32(i)}
		for range 5 {
			reqs[i].Records = append(reqs[i].Records, domain.Record{Key: []byte("key"), Payload: bytes.Repeat([]byte{0x5a}, 300)})
		}
	}
	singles := func() error {
		var errs []error
		for _, req := range reqs {
			_, err := p.CommitBatch(context.Background(), "owner", req)
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	group := func() error {
		var errs []error
		for _, out := range p.CommitBatches(context.Background(), "owner", reqs) {
			errs = append(errs, out.Err)
		}
		return errors.Join(errs...)
	}
	for _, run := range []struct {
		name string
		call func() error
	}{{"op11x4", singles}, {"op37x1", group}} {
		b.Run(run.name, func(b *testing.B) {
			if err := run.call(); err != nil {
				b.Fatal(err)
			}
			used := parallelCPU(b, run.call)
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N*batches), "cpu-ns/batch")
		})
	}
}

// BenchmarkSparseTokenDelivery measures what one record delivered through
// a delivery token costs on the wire, both ends in this process, calls
// made as BenchmarkSparseCall makes them (one caller, a pause between
// records, the pauses' CPU taken off): the owner's notification (op 31)
// and the requester's claim (op 2, answered with a 256-byte record), or
// one push carrying the record (op 41). Run it with a fixed count, e.g.
// -benchtime 2000x -cpu 2. Three runs on the shared 2-core machine in a
// slow hour (2026-12-07):
//
//	arm           cpu-ns/op                  B/op   allocs/op
//	notify-claim  526,973  635,586  641,352  6,490  104
//	push          526,109  493,996  383,222  4,400  57
func BenchmarkSparseTokenDelivery(b *testing.B) {
	srv, _ := newServer(b, ServerOptions{})
	d := pushedDelivery("t", 7, "", strings.Repeat("p", 256))
	RegisterConsume(srv, &fakeService{deliveries: []domain.Delivery{d}})
	RegisterTokens(srv, &fakeTokens{claim: true})
	p := ackCaller(b, srv.Addr().String(), noObserver{})
	ctx := context.Background()
	claim := ports.RemoteConsume{Topic: "t", LocalOnly: true, Claim: true}
	b.Run("notify-claim", func(b *testing.B) {
		sparseCPU(b, func() error {
			if _, err := p.NotifyToken(ctx, "owner", "node-1", "t"); err != nil {
				return err
			}
			_, err := p.ConsumeRemote(ctx, "owner", claim)
			return err
		})
	})
	b.Run("push", func(b *testing.B) {
		ds := []domain.Delivery{d}
		sparseCPU(b, func() error {
			_, _, err := p.PushToken(ctx, "owner", "node-1", "t", ds)
			return err
		})
	})
}

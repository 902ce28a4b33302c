package produce_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/narad/narad/application/produce"
)

// BenchmarkDispatchBatch is one keyless batch produce of 100 messages of
// 256 bytes into the WAL of a node owning all 6 partitions, carried by the
// dispatcher into the partitions' logs (the fakes do no I/O): the
// allocations per operation are the use case's, the dispatcher's and the
// fakes'.
func BenchmarkDispatchBatch(b *testing.B) {
	e := newEnv(b)
	e.createTopic(b, "t", 1, 6)
	e.assign(b, "t", self)
	e.run(b)
	msgs := make([]produce.Message, 100)
	for i := range msgs {
		msgs[i] = msg("", strings.Repeat("p", 256))
	}
	ctx := context.Background()
	b.ReportAllocs()
	sent := uint64(0)
	for b.Loop() {
		if err := e.svc.AcceptBatch(ctx, "t", msgs); err != nil {
			b.Fatal(err)
		}
		sent += uint64(len(msgs))
		for e.wal.Checkpoint() < sent {
			runtime.Gosched()
		}
	}
}

// BenchmarkObserveCommitLatency is what the dispatcher does with each
// commit's latency (the spec's moving average and the busy linger's
// window), 2 x produce.BusyWindow commits to one owner per operation:
// no allocation once the owner is known.
func BenchmarkObserveCommitLatency(b *testing.B) {
	d := newEnv(b).dispatcher()
	d.FillLatency("n2", produce.BusyLatencyMin)
	b.ReportAllocs()
	for b.Loop() {
		d.FillLatency("n2", produce.BusyLatencyMin/2)
	}
}

// Ensure that batches carried one after the other, while queues grow into
// the arrays of batches that landed before, reach their partitions whole,
// once each and in WAL order.
func TestDispatcherReusesQueuesWithoutMixingRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 6)
	e.assign(t, "t", self)
	e.run(t)
	const batches, size = 40, 100
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range batches / 4 {
				msgs := make([]produce.Message, size)
				for j := range msgs {
					msgs[j] = msg("", fmt.Sprintf("g%d-b%02d-m%03d", g, i, j))
				}
				if err := e.svc.AcceptBatch(context.Background(), "t", msgs); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	waitFor(t, "every record carried", func() bool { return e.wal.Checkpoint() == batches*size })
	e.wantWALOrder(t, "t", id, 6)
}

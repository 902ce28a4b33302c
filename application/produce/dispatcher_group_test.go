package produce_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/ports"
)

// sortedCalls returns the call log with each call's partitions sorted.
func sortedCalls(e *env) [][]int32 {
	calls := e.remote.callLog()
	for _, c := range calls {
		slices.Sort(c)
	}
	return calls
}

// remoteTopic creates topic t with n partitions on n2 and accepts one
// record of payload on each partition.
func remoteTopic(t *testing.T, e *env, n int32, payload string) {
	t.Helper()
	e.createTopic(t, "t", 1, n)
	e.assign(t, "t", "n2")
	for p := range n {
		e.produce(t, "t", "", payload+fmt.Sprint(p), p)
	}
}

// Ensure that ready batches for one remote owner leave in one call while
// this node's partitions commit locally, one commit each.
func TestBatchesForOneOwnerLeaveInOneCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 6)
	e.assign(t, "t", "n2", 0, 1, 2, 3)
	e.assign(t, "t", self, 4, 5)
	for p := range int32(6) {
		e.produce(t, "t", "", fmt.Sprintf("m%d", p), p)
	}
	e.run(t)
	waitFor(t, "checkpoint at 6", func() bool { return e.wal.Checkpoint() == 6 })
	if got := sortedCalls(e); fmt.Sprint(got) != "[[0 1 2 3]]" {
		t.Fatalf("remote calls %v, want one call with partitions 0-3", got)
	}
	if n := len(e.committer.snapshot()); n != 2 {
		t.Fatalf("%d local commits, want 2", n)
	}
}

// Ensure that one batch refused within a call keeps only its own records:
// the others are done, and the refused one retries alone, as a probe, and
// lands once.
func TestOneFailedBatchInACallKeepsOnlyItsRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	remoteTopic(t, e, 3, "m")
	e.peers.FailNext(fake.ErrFakePeerFailure) // the call's first batch
	e.run(t)
	waitFor(t, "two batches committed", func() bool { return len(e.peers.Commits()) == 2 })
	if cp := e.wal.Checkpoint(); cp == 3 {
		t.Fatal("checkpoint passed a refused batch")
	}
	waitFor(t, "the retry", func() bool {
		e.clock.Advance(100 * time.Millisecond)
		return e.wal.Checkpoint() == 3
	})
	var landed []string
	for _, c := range e.peers.Commits() {
		for _, r := range c.Req.Records {
			landed = append(landed, string(r.Payload))
		}
	}
	slices.Sort(landed)
	if fmt.Sprint(landed) != "[m0 m1 m2]" {
		t.Fatalf("landed %v, want each record once", landed)
	}
	calls := e.remote.callLog()
	if first, last := calls[0], calls[len(calls)-1]; len(first) != 3 || len(last) != 1 {
		t.Fatalf("calls %v: want the three batches together, then the probe alone", calls)
	}
}

// Ensure that a call carries at most the commit byte budget: with a 1 MiB
// record on each of nine partitions, seven batches fit one 8 MiB call and
// the other two go in a second.
func TestCallsKeepToTheByteBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	remoteTopic(t, e, 9, string(bytes.Repeat([]byte("x"), 1<<20-1)))
	e.run(t)
	waitFor(t, "checkpoint at 9", func() bool { return e.wal.Checkpoint() == 9 })
	var sizes []int
	for _, c := range e.remote.callLog() {
		sizes = append(sizes, len(c))
	}
	slices.Sort(sizes)
	if fmt.Sprint(sizes) != "[2 7]" {
		t.Fatalf("batches per call %v, want [2 7]", sizes)
	}
}

// Ensure that a call carries at most produce.CommitGroupMax batches.
func TestCallsKeepToTheGroupCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := int32(produce.CommitGroupMax + 1)
	remoteTopic(t, e, n, "m")
	e.run(t)
	waitFor(t, "every record committed", func() bool { return e.wal.Checkpoint() == uint64(n) })
	var sizes []int
	for _, c := range e.remote.callLog() {
		sizes = append(sizes, len(c))
	}
	slices.Sort(sizes)
	if fmt.Sprint(sizes) != fmt.Sprintf("[1 %d]", produce.CommitGroupMax) {
		t.Fatalf("batches per call %v, want one full call and one of 1", sizes)
	}
}

// shortPeers answers every multi-batch call with one outcome too few.
type shortPeers struct{ *slowPeers }

func (p shortPeers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	return p.slowPeers.CommitBatches(ctx, node, reqs)[1:]
}

// Ensure that a multi-batch answer with the wrong number of outcomes
// acknowledges none of its batches: the checkpoint stays behind them.
func TestAShortAnswerAcknowledgesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	remoteTopic(t, e, 3, "m")
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: e.turns, Store: e.store, Latch: e.latch, Confirmer: leaderconfirm.New(e.store),
		Local: e.committer, Peers: shortPeers{e.remote}, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Self: self,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "the first call", func() bool { return len(e.remote.callLog()) >= 1 })
	e.step(t, 0) // let the dispatcher settle the call
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d after an answer that acknowledged nothing", cp)
	}
}

package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the window per owner is max(128, 8 × GOMAXPROCS) and what a
// Peers uses by default (internals.md §5.9, §5.11).
func TestAckWindowDefault(t *testing.T) {
	t.Parallel()
	for procs, want := range map[int]int{1: 128, 16: 128, 17: 136, 64: 512} {
		if got := ackWindow(procs); got != want {
			t.Fatalf("ackWindow(%d) = %d, want %d", procs, got, want)
		}
	}
	c, _ := newClient(t, secretA)
	if got, want := NewPeers(c, staticResolver{}).acks.window, max(128, 8*runtime.GOMAXPROCS(0)); got != want {
		t.Fatalf("default window %d, want %d", got, want)
	}
}

// ensure that below the window every forwarded ack goes alone as its
// single op, never coalesced, even when many are in flight at once
// (internals.md §5.9).
func TestAckLaneBelowWindowSendsSingleOps(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, g, false), obs, withAckWindow(8))
	const acks = 8
	var outs []<-chan error
	for i := range acks {
		outs = append(outs, settleAsync(context.Background(), p, handle(i)))
	}
	waitFor(t, "every ack at the owner at once", func() bool { return g.entered.Load() == acks })
	g.release(acks)
	for _, out := range outs {
		if err := <-out; err != nil {
			t.Fatal(err)
		}
	}
	_, settles, batches := g.calls()
	if len(settles) != acks || len(batches) != 0 {
		t.Fatalf("owner saw %d single ops and %d batches, want %d and 0", len(settles), len(batches), acks)
	}
	if calls := obs.take(); count(calls, rpcCall{"ack", OutcomeOK}) != acks || len(calls) != acks {
		t.Fatalf("observed %v", calls)
	}
}

// ensure that with the window full further acks queue, and each freed slot
// sends the queue as one AckBatch of at most 64 records: a pile of 70
// leaves as a batch of 64 on the first freed slot and one of 6 on the next
// (internals.md §5.9).
func TestAckLaneFullWindowCoalescesPerFreedSlot(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, g, false), obs, withAckWindow(2))
	first := []<-chan error{settleAsync(context.Background(), p, handle(0)), settleAsync(context.Background(), p, handle(1))}
	waitFor(t, "the window full", func() bool { return g.entered.Load() == 2 })
	var queued []<-chan error
	for i := range 70 {
		queued = append(queued, settleAsync(context.Background(), p, handle(100+i)))
	}
	waitFor(t, "70 acks queued", func() bool { return p.acks.queued("owner") == 70 })

	g.release(1) // one single op ends: one slot frees, one batch leaves
	waitFor(t, "a batch at the owner", func() bool { return g.entered.Load() == 3 })
	if q := p.acks.queued("owner"); q != 6 {
		t.Fatalf("%d acks still queued after one freed slot, want 6", q)
	}
	g.release(1) // the other single op or the batch: the last 6 leave
	waitFor(t, "the second batch at the owner", func() bool { return g.entered.Load() == 4 })
	g.release(2)
	for _, out := range append(first, queued...) {
		if err := <-out; err != nil {
			t.Fatal(err)
		}
	}
	_, settles, batches := g.calls()
	sizes := []int{}
	for _, b := range batches {
		sizes = append(sizes, len(b.hs))
	}
	slices.Sort(sizes)
	if len(settles) != 2 || !slices.Equal(sizes, []int{6, 64}) {
		t.Fatalf("owner saw %d single ops and batches of %v, want 2 and [6 64]", len(settles), sizes)
	}
	if calls := obs.take(); count(calls, rpcCall{"ack_batch", OutcomeOK}) != 2 || count(calls, rpcCall{"ack", OutcomeOK}) != 2 {
		t.Fatalf("observed %v, want 2 ack and 2 ack_batch", calls)
	}
}

// ensure that a queued ack whose client gave up is removed from its batch:
// it is answered with its context's error as never sent and never reaches
// the owner, while the others of the queue leave together (internals.md
// §5.9).
func TestAckLaneCancelledAckLeavesItsBatch(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	p := ackCaller(t, ackOwner(t, g, false), &recordingObserver{}, withAckWindow(1))
	blocker := settleAsync(context.Background(), p, handle(0))
	waitFor(t, "the window full", func() bool { return g.entered.Load() == 1 })
	a := settleAsync(context.Background(), p, handle(1))
	waitFor(t, "a queued", func() bool { return p.acks.queued("owner") == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	b := settleAsync(ctx, p, handle(2))
	waitFor(t, "b queued", func() bool { return p.acks.queued("owner") == 2 })
	c := settleAsync(context.Background(), p, handle(3))
	waitFor(t, "c queued", func() bool { return p.acks.queued("owner") == 3 })

	cancel()
	err := <-b
	if !errors.Is(err, context.Canceled) || !errors.Is(err, domain.ErrNotSent) || errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("cancelled ack: %v, want its cancellation as never sent", err)
	}
	if q := p.acks.queued("owner"); q != 2 {
		t.Fatalf("%d queued after the cancel, want 2", q)
	}
	g.release(3)
	for _, out := range []<-chan error{blocker, a, c} {
		if err := <-out; err != nil {
			t.Fatal(err)
		}
	}
	_, _, batches := g.calls()
	if len(batches) != 1 || !slices.Equal(batches[0].hs, []domain.ReceiptHandle{handle(1), handle(3)}) {
		t.Fatalf("owner saw batches %+v, want one of handles 1 and 3", batches)
	}
}

// ensure that an owner that predates AckBatch (it answers the unknown op
// with 400) gets the records one at a time as single ops on their
// remaining budget, then only single ops for 2 min, and AckBatch again
// after that (internals.md §5.9, §10.3); the refused batch is observed
// once as a rejected ack_batch.
func TestAckLaneOlderOwnerGetsSingleOpsForTwoMinutes(t *testing.T) {
	t.Parallel()
	svc := &fakeService{settleErr: map[domain.ReceiptHandle]error{handle(2): domain.ErrLeaseGone}}
	obs := &recordingObserver{}
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	p := ackCaller(t, ackOwner(t, svc, true), obs, withClock(clock))
	settle := func(hs ...domain.ReceiptHandle) []error {
		t.Helper()
		errs, err := p.SettleRemote(context.Background(), "owner", "t", hs, ports.SettleAck)
		if err != nil {
			t.Fatal(err)
		}
		return errs
	}

	errs := settle(handle(1), handle(2), handle(3))
	if errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) || errs[2] != nil {
		t.Fatalf("outcomes %v", errs)
	}
	calls := obs.take()
	if !slices.Equal(calls, append([]rpcCall{{"ack_batch", OutcomeRejected}}, calls[1:]...)) ||
		count(calls, rpcCall{"ack", OutcomeOK})+count(calls, rpcCall{"ack", OutcomeRejected}) != 3 || len(calls) != 4 {
		t.Fatalf("observed %v, want a rejected ack_batch then 3 single acks", calls)
	}

	advance(legacyPeerMemory - time.Second)
	settle(handle(4), handle(5))
	if calls := obs.take(); count(calls, rpcCall{"ack", OutcomeOK}) != 2 || len(calls) != 2 {
		t.Fatalf("within 2 min observed %v, want 2 single acks and no ack_batch", calls)
	}

	advance(time.Second)
	settle(handle(6), handle(7))
	if calls := obs.take(); len(calls) != 3 || calls[0] != (rpcCall{"ack_batch", OutcomeRejected}) {
		t.Fatalf("after 2 min observed %v, want ack_batch tried again", calls)
	}
	_, settles, _ := svc.calls()
	if len(settles) != 7 {
		t.Fatalf("owner applied %d single ops, want 7", len(settles))
	}
}

// ensure that queued acks refused as an AckBatch by an older owner leave
// one at a time as single ops, each on a freed slot of the window
// (internals.md §5.9).
func TestAckLaneOlderOwnerQueueDrainsAsSingleOps(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, g, true), obs, withAckWindow(1))
	blocker := settleAsync(context.Background(), p, handle(0))
	waitFor(t, "the window full", func() bool { return g.entered.Load() == 1 })
	var queued []<-chan error
	for i := range 3 {
		queued = append(queued, settleAsync(context.Background(), p, handle(1+i)))
	}
	waitFor(t, "3 acks queued", func() bool { return p.acks.queued("owner") == 3 })
	g.release(4)
	for _, out := range append(queued, blocker) {
		if err := <-out; err != nil {
			t.Fatal(err)
		}
	}
	_, settles, _ := g.calls()
	calls := obs.take()
	if len(settles) != 4 || count(calls, rpcCall{"ack_batch", OutcomeRejected}) != 1 || count(calls, rpcCall{"ack", OutcomeOK}) != 4 {
		t.Fatalf("owner applied %d single ops; observed %v", len(settles), calls)
	}
}

// ensure that each record of an AckBatch is answered exactly as its single
// op: the same status, code and detail for a lapsed lease, another
// owner's partition, an unavailable shard, a refusal with a client
// message, and success; and an absent topic fails both as a whole
// (internals.md §5.9).
func TestAckBatchOutcomesEqualSingleOps(t *testing.T) {
	t.Parallel()
	svc := &fakeService{settleErr: map[domain.ReceiptHandle]error{
		handle(1): fmt.Errorf("consume: t/1: %w", domain.ErrLeaseGone),
		handle(2): domain.ErrNotOwner,
		handle(3): domain.ErrUnavailable,
		handle(4): domain.Refuse(domain.ErrInvalidReceiptHandle, "receipt handle is malformed"),
	}}
	p := ackCaller(t, ackOwner(t, svc, false), &recordingObserver{})
	hs := []domain.ReceiptHandle{handle(0), handle(1), handle(2), handle(3), handle(4)}
	batched, err := p.SettleRemote(context.Background(), "owner", "t", hs, ports.SettleNack)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs {
		single, err := p.SettleRemote(context.Background(), "owner", "t", hs[i:i+1], ports.SettleNack)
		if err != nil {
			t.Fatal(err)
		}
		if (single[0] == nil) != (batched[i] == nil) {
			t.Fatalf("handle %v: single %v, batched %v", h, single[0], batched[i])
		}
		if single[0] == nil {
			continue
		}
		ss, sc, sd := refusalOf(single[0])
		bs, bc, bd := refusalOf(batched[i])
		if ss != bs || sc != bc || sd != bd {
			t.Fatalf("handle %v: single %d %s %q, batched %d %s %q", h, ss, sc, sd, bs, bc, bd)
		}
	}
	if _, _, batches := svc.calls(); len(batches) != 1 || batches[0].op != consume.OpNack {
		t.Fatalf("owner saw batches %+v", batches)
	}
	svc.mu.Lock()
	svc.topicErr = domain.ErrTopicNotFound
	svc.mu.Unlock()
	for _, n := range []int{1, 3} {
		if _, err := p.SettleRemote(context.Background(), "owner", "t", hs[:n], ports.SettleAck); !errors.Is(err, domain.ErrTopicNotFound) {
			t.Fatalf("%d handles to an absent topic: %v", n, err)
		}
	}
}

// ensure that an ack whose client gave up before a slot took it is never
// sent, even when the window has room: it costs no RPC and is answered
// with its context's error as never sent (internals.md §5.9).
func TestAckLaneGivenUpAckNeverSent(t *testing.T) {
	t.Parallel()
	svc := &fakeService{}
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, svc, false), obs)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.SettleRemote(ctx, "owner", "t", []domain.ReceiptHandle{handle(1), handle(2)}, ports.SettleAck)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, domain.ErrNotSent) {
		t.Fatalf("err = %v, want the cancellation as never sent", err)
	}
	if calls := obs.take(); len(calls) != 0 {
		t.Fatalf("observed %v, want no RPC", calls)
	}
}

// ensure that the owner answers nothing and applies nothing of an AckBatch
// whose requester gave up while it waited for a handler slot; the batch
// takes one slot for all its records (internals.md §5.9, §10.3).
func TestAckBatchGivenUpWhileWaitingForSlotIsNotApplied(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	srv, _ := newServer(t, ServerOptions{MaxHandlers: 1})
	RegisterSettle(srv, g)
	p := ackCaller(t, srv.Addr().String(), &recordingObserver{})
	blocker := settleAsync(context.Background(), p, handle(0))
	waitFor(t, "the only handler slot taken", func() bool { return g.entered.Load() == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := <-settleAsync(ctx, p, handle(1), handle(2)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("batch err = %v, want its deadline", err)
	}
	waitFor(t, "the owner to see the batch given up", func() bool { return srv.unserved.Load() == 1 })
	g.release(1)
	if err := <-blocker; err != nil {
		t.Fatal(err)
	}
	g.release(1)
	if err := <-settleAsync(context.Background(), p, handle(3), handle(4)); err != nil {
		t.Fatalf("a later batch: %v", err)
	}
	_, _, batches := g.calls()
	if len(batches) != 1 || batches[0].hs[0] != handle(3) || g.entered.Load() != 2 {
		t.Fatalf("owner ran %d handlers and applied batches %+v, want only the later one", g.entered.Load(), batches)
	}
}

// ensure that a queue of one leaves as its single op when a slot frees,
// and that a batch carries one topic: the queue's head and the records of
// its topic behind it leave together, another topic's record on the next
// freed slot (internals.md §5.9; the AckBatch frame names one topic).
func TestAckLaneQueueOfOneAndTopicsApart(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, g, false), obs, withAckWindow(1))
	on := func(topic string, n int) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := p.SettleRemote(context.Background(), "owner", topic, []domain.ReceiptHandle{handle(n)}, ports.SettleAck)
			done <- err
		}()
		return done
	}
	outs := []<-chan error{on("a", 0)}
	waitFor(t, "the window full", func() bool { return g.entered.Load() == 1 })
	outs = append(outs, on("a", 1))
	waitFor(t, "one queued", func() bool { return p.acks.queued("owner") == 1 })
	g.release(1)
	waitFor(t, "the queue of one sent", func() bool { return g.entered.Load() == 2 })
	for i, topic := range []string{"a", "b", "a"} {
		outs = append(outs, on(topic, 2+i))
		waitFor(t, "queued in order", func() bool { return p.acks.queued("owner") == i+1 })
	}
	g.release(3)
	for _, out := range outs {
		if err := <-out; err != nil {
			t.Fatal(err)
		}
	}
	_, settles, batches := g.calls()
	want := []settleCall{{"a", handle(0), consume.OpAck}, {"a", handle(1), consume.OpAck}, {"b", handle(3), consume.OpAck}}
	if !slices.Equal(settles, want) {
		t.Fatalf("single ops %+v, want %+v", settles, want)
	}
	if len(batches) != 1 || batches[0].topic != "a" || !slices.Equal(batches[0].hs, []domain.ReceiptHandle{handle(2), handle(4)}) {
		t.Fatalf("batches %+v, want one of topic a with handles 2 and 4", batches)
	}
	if calls := obs.take(); count(calls, rpcCall{"ack", OutcomeOK}) != 3 || count(calls, rpcCall{"ack_batch", OutcomeOK}) != 1 {
		t.Fatalf("observed %v", calls)
	}
}

// ensure that an RPC whose every caller gave up is cancelled at once rather
// than left to run out the 2 s budget: the caller's acks are answered as
// sent without an answer, and the call ends on the cancellation (outcome
// error), never at its deadline (timeout) (internals.md §5.9).
func TestAckLaneRPCCancelledWhenItsCallersGiveUp(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	obs := &recordingObserver{}
	p := ackCaller(t, ackOwner(t, g, false), obs)
	ctx, cancel := context.WithCancel(context.Background())
	done := settleAsync(ctx, p, handle(1), handle(2))
	waitFor(t, "the batch at the owner", func() bool { return g.entered.Load() == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("err = %v, want the cancellation as sent without an answer", err)
	}
	var calls []rpcCall
	waitFor(t, "the RPC to end", func() bool { calls = append(calls, obs.take()...); return len(calls) > 0 })
	if want := []rpcCall{{"ack_batch", OutcomeError}}; !slices.Equal(calls, want) {
		t.Fatalf("observed %v, want %v", calls, want)
	}
}

// ensure that a lone ack the caller gives up while it is at the owner is
// answered as sent without an answer (the outcome is unknown), its RPC
// cancelled, and that the lane's slot comes back: the next lone ack
// leaves at once (internals.md §5.9).
func TestAckLaneLoneAckGivenUpInFlight(t *testing.T) {
	t.Parallel()
	g := newGatedSettler()
	p := ackCaller(t, ackOwner(t, g, false), &recordingObserver{}, withAckWindow(1))
	ctx, cancel := context.WithCancel(context.Background())
	out := settleAsync(ctx, p, handle(1))
	waitFor(t, "the ack at the owner", func() bool { return g.entered.Load() == 1 })
	cancel()
	if err := <-out; !errors.Is(err, domain.ErrNoAnswer) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the cancellation as sent without an answer", err)
	}
	g.release(2) // the first handler may still hold the gate if the cancel has not reached it
	if err := <-settleAsync(context.Background(), p, handle(2)); err != nil {
		t.Fatalf("the next ack: %v", err)
	}
}

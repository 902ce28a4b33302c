package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

type result struct {
	ds  []domain.Delivery
	err error
	at  time.Duration
}

// longPoll starts a consume that waits up to wait and returns its outcome
// on the channel.
func (e *env) longPoll(ctx context.Context, req consume.Request) <-chan result {
	if req.Identity == "" {
		req.Identity = "poller"
	}
	out := make(chan result, 1)
	start := time.Now()
	go func() {
		ds, err := e.svc.Consume(ctx, req)
		out <- result{ds, err, time.Since(start)}
	}()
	return out
}

func (e *env) parked(n int) {
	e.t.Helper()
	eventually(e.t, 5*time.Second, "consumers parked", func() bool { return e.svc.Parked() == n })
}

// ensure that a consumer parked before a commit is woken by it well before
// its wait ends (conformance 101; story F36).
func TestLongPollWokenByACommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 3, nil, nil)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	e.produce(tp, 2, "hello")
	r := <-got
	if r.err != nil || len(r.ds) != 1 || r.ds[0].Partition != 2 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
	if e.svc.Parked() != 0 {
		t.Fatalf("%d still parked", e.svc.Parked())
	}
}

// ensure that a nack wakes a parked consumer at once with the released
// record (story F36: wake on lease releases too).
func TestLongPollWokenByANack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "only")
	d := e.one("orders", -1)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	if err := e.svc.Nack(t.Context(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.ds) != 1 || r.ds[0].Record.Offset != 0 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
}

// ensure that the expiry purger wakes a parked consumer when a lease lapses.
func TestLongPollWokenByAnExpiry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{PurgeInterval: 10 * time.Millisecond})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "only")
	e.one("orders", 0)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Mode: consume.ModePinned, Wait: 10 * time.Second})
	e.parked(1)
	e.clock.Advance(31 * time.Second)
	r := <-got
	if r.err != nil || len(r.ds) != 1 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
}

// ensure that a pinned long poll on an empty partition does not delay an
// unpinned consumer whose partition gets data (story F36).
func TestPinnedWaiterDoesNotStallSharedOnes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 2, nil, nil)
	pinned := e.longPoll(t.Context(), consume.Request{Topic: "orders", Mode: consume.ModePinned, Partition: 0, Wait: 300 * time.Millisecond})
	shared := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(2)
	e.produce(tp, 1, "for the shared one")
	r := <-shared
	if r.err != nil || len(r.ds) != 1 || r.ds[0].Partition != 1 || r.at > 5*time.Second {
		t.Fatalf("shared: %+v", r)
	}
	if r := <-pinned; r.err != nil || len(r.ds) != 0 {
		t.Fatalf("pinned: %+v", r)
	}
}

// ensure that a wait with nothing arriving answers empty after about the
// wait, and a negative or zero wait answers at once (conformance 99, 100,
// 113).
func TestWaitRunsOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	e.createTopic("empty", 1, nil, nil)
	r := <-e.longPoll(t.Context(), consume.Request{Topic: "empty", Wait: 200 * time.Millisecond})
	if r.err != nil || len(r.ds) != 0 || r.at < 150*time.Millisecond || r.at > 2*time.Second {
		t.Fatalf("%+v", r)
	}
	r = <-e.longPoll(t.Context(), consume.Request{Topic: "empty", Wait: -2 * time.Second})
	if r.err != nil || len(r.ds) != 0 || r.at > time.Second {
		t.Fatalf("%+v", r)
	}
	if e.metrics.Count("consume_wait empty/timeout") != 1 || e.metrics.Count("consume_wait empty/no_wait") != 1 {
		t.Fatal("wait outcomes not recorded")
	}
}

// ensure that a queue long poll on a topic whose partitions are not
// assigned waits out its wait instead of answering at once, and is served
// once a partition is placed here (conformance 226).
func TestUnassignedTopicWaitsForARoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("fresh", 1, nil, func(int32) string { return "" })
	r := <-e.longPoll(t.Context(), consume.Request{Topic: "fresh", Wait: 200 * time.Millisecond})
	if r.err != nil || len(r.ds) != 0 || r.at < 150*time.Millisecond {
		t.Fatalf("%+v", r)
	}
	got := e.longPoll(t.Context(), consume.Request{Topic: "fresh", Wait: 10 * time.Second})
	e.parked(1)
	e.assign("fresh", tp.ID, 0, self)
	e.produce(tp, 0, "placed")
	if r := <-got; r.err != nil || len(r.ds) != 1 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
}

// ensure that a batch long poll takes the record that woke it and tops up
// with what else is ready (conformance 211).
func TestBatchLongPollTopsUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 5, Wait: 10 * time.Second})
	e.parked(1)
	e.produce(tp, 0, "a", "b", "c")
	r := <-got
	if r.err != nil || len(r.ds) != 3 {
		t.Fatalf("%d records, %v", len(r.ds), r.err)
	}
}

// ensure that a consumer cancelled while parked leaves nothing behind: the
// next record goes to the next consumer at once.
func TestCancelledWaiterLeavesNoLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	got := e.longPoll(ctx, consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	cancel()
	if r := <-got; r.err == nil || len(r.ds) != 0 {
		t.Fatalf("%+v", r)
	}
	e.produce(tp, 0, "x")
	if d := e.one("orders", 0); d.Record.Offset != 0 {
		t.Fatalf("got %d", d.Record.Offset)
	}
	if e.svc.Parked() != 0 {
		t.Fatalf("%d parked", e.svc.Parked())
	}
}

// ensure that the per-identity cap counts long polls while they wait and a
// batch as its max, and leaves other identities alone (conformance 164, 165).
func TestPerIdentityConsumeCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{MaxInFlightPerIdentity: 2})
	e.run()
	e.createTopic("empty", 1, nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	a := e.longPoll(ctx, consume.Request{Topic: "empty", Wait: 10 * time.Second, Identity: "u"})
	b := e.longPoll(ctx, consume.Request{Topic: "empty", Wait: 10 * time.Second, Identity: "u"})
	e.parked(2)
	_, err := e.svc.Consume(t.Context(), consume.Request{Topic: "empty", Identity: "u"})
	wantErr(t, err, domain.ErrTooManyConsumes)
	if want := "too many in-flight consume requests for this identity (limit 2 per node)"; err.Error() != want {
		t.Fatalf("message %q", err.Error())
	}
	if _, err := e.svc.Consume(t.Context(), consume.Request{Topic: "empty", Identity: "v"}); err != nil {
		t.Fatalf("another identity: %v", err)
	}
	cancel()
	<-a
	<-b
	e.parked(0)
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	c := e.longPoll(ctx, consume.Request{Topic: "empty", Wait: 10 * time.Second, Identity: "u"})
	e.parked(1)
	_, err = e.svc.Consume(t.Context(), consume.Request{Topic: "empty", Identity: "u", Mode: consume.ModeBatch, Max: 10})
	wantErr(t, err, domain.ErrTooManyConsumes) // counts as 2 (clamped), beside one waiting
	cancel()
	<-c
	if _, err := e.svc.Consume(t.Context(), consume.Request{Topic: "empty", Identity: "u", Mode: consume.ModeBatch, Max: 10}); err != nil {
		t.Fatalf("a batch clamped to the cap, alone: %v", err)
	}
}

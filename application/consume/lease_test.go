package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// ensure that a lease hides a message until its visibility timeout, after
// which it is redelivered with a new handle and the old handle is dead
// (conformance 107, 108; story F25).
func TestLeaseExpiryRedeliversWithANewHandle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 3000 }, nil)
	e.produce(tp, 0, `{"n":0}`)
	first := e.one("orders", -1)
	if first.Handle == nil || first.Handle.Partition != 0 || first.Handle.Offset != 0 || first.Handle.Nonce == 0 {
		t.Fatalf("first delivery handle %v", first.Handle)
	}
	e.none("orders", -1)
	e.clock.Advance(2999 * time.Millisecond)
	e.none("orders", -1)
	e.clock.Advance(time.Millisecond)
	again := e.one("orders", -1)
	if again.Record.Offset != 0 || again.Handle.Nonce == first.Handle.Nonce {
		t.Fatalf("redelivery %v, first %v", again.Handle, first.Handle)
	}
	wantErr(t, e.svc.Ack(context.Background(), "orders", *first.Handle), domain.ErrLeaseGone)
	e.ack("orders", again)
}

// ensure that a restart never lets a pre-restart handle ack a new lease of
// the same offset (story F25: random nonce streams, not counters).
func TestOldHandleAfterRestartIsGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "a")
	old := e.one("orders", -1)
	e.restart(e.offsets, true)
	fresh := e.one("orders", -1)
	if fresh.Record.Offset != 0 {
		t.Fatalf("after restart got offset %d", fresh.Record.Offset)
	}
	wantErr(t, e.svc.Ack(context.Background(), "orders", *old.Handle), domain.ErrLeaseGone)
	e.ack("orders", fresh)
}

// ensure that acks settle for good, in any order, and that a second ack of
// the same handle is gone (conformance 119, 120, 121).
func TestAcksSettleInAnyOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2")
	d0, d1 := e.one("orders", 0), e.one("orders", 0)
	e.ack("orders", d1)
	e.ack("orders", d0)
	wantErr(t, e.svc.Ack(context.Background(), "orders", *d0.Handle), domain.ErrLeaseGone)
	if d2 := e.one("orders", 0); d2.Record.Offset != 2 {
		t.Fatalf("next offset %d, want 2", d2.Record.Offset)
	} else {
		e.ack("orders", d2)
	}
	e.clock.Advance(time.Hour)
	e.none("orders", -1)
}

// ensure that a nack makes the message available at once with a new handle,
// and that the old handle is then dead (conformance 128).
func TestNackRedeliversAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x")
	d := e.one("orders", -1)
	if err := e.svc.Nack(context.Background(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	again := e.one("orders", -1)
	if again.Record.Offset != d.Record.Offset || again.Handle.Nonce == d.Handle.Nonce {
		t.Fatalf("nack redelivery %v after %v", again.Handle, d.Handle)
	}
	wantErr(t, e.svc.Ack(context.Background(), "orders", *d.Handle), domain.ErrLeaseGone)
	e.ack("orders", again)
	if got := e.metrics.Count("nack orders"); got != 1 {
		t.Fatalf("nack metric %d", got)
	}
}

// ensure that extend renews the lease for a full window from now and keeps
// the handle valid, and that a lapsed lease cannot be extended (conformance
// 126, 127).
func TestExtend(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 3000 }, nil)
	e.produce(tp, 0, "x", "y")
	d := e.one("orders", 0)
	e.clock.Advance(1500 * time.Millisecond)
	if err := e.svc.Extend(context.Background(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2100 * time.Millisecond) // 3600 ms after the lease
	if got := e.one("orders", 0); got.Record.Offset != 1 {
		t.Fatalf("offset 0 redelivered while extended (got %d)", got.Record.Offset)
	}
	e.ack("orders", d)

	lapsed := e.createTopic("short", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 1000 }, nil)
	e.produce(lapsed, 0, "z")
	d = e.one("short", 0)
	e.clock.Advance(1200 * time.Millisecond)
	wantErr(t, e.svc.Extend(context.Background(), "short", *d.Handle), domain.ErrLeaseGone)
	if got := e.metrics.Count("extend orders"); got != 1 {
		t.Fatalf("extend metric %d", got)
	}
}

// ensure that with the acked-ahead set full, acks are still accepted and
// only the frontier offset may be handed out; acking it resumes service
// (conformance 125, story F7).
func TestAckedAheadCapGatesDeliveriesOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.MaxAckedAhead = 2 }, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4")
	var ds []domain.Delivery
	for range 4 {
		ds = append(ds, e.one("orders", 0))
	}
	for _, d := range ds[1:] {
		e.ack("orders", d) // 1, 2, 3: the third is past the cap, accepted anyway
	}
	e.none("orders", 0)
	e.ack("orders", ds[0])
	if d := e.one("orders", 0); d.Record.Offset != 4 {
		t.Fatalf("after the frontier ack got %d, want 4", d.Record.Offset)
	}
}

// ensure that at the cap only the leased frontier hole is offered, once its
// lease lapses (story F7's defence).
func TestAckedAheadCapOffersOnlyTheFrontierHole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.MaxAckedAhead = 4; c.VisibilityTimeoutMs = 1000 }, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4", "5", "6")
	var ds []domain.Delivery
	for range 6 {
		ds = append(ds, e.one("orders", 0))
	}
	for _, d := range ds[1:] {
		e.ack("orders", d)
	}
	e.none("orders", 0)
	e.clock.Advance(time.Second)
	if d := e.one("orders", 0); d.Record.Offset != 0 {
		t.Fatalf("got %d, want the frontier hole 0", d.Record.Offset)
	} else {
		e.none("orders", 0)
		e.ack("orders", d)
	}
	if d := e.one("orders", 0); d.Record.Offset != 6 {
		t.Fatalf("got %d, want 6", d.Record.Offset)
	}
}

// ensure that the in-flight cap bounds leases per partition, that an ack
// frees a slot, and that an altered cap applies at once (conformance 59, 116).
func TestInFlightCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.MaxInFlight = 2 }, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4")
	a, b := e.one("orders", 0), e.one("orders", 0)
	if a.Record.Offset == b.Record.Offset {
		t.Fatal("same offset twice")
	}
	e.none("orders", 0)
	e.ack("orders", a)
	if c := e.one("orders", 0); c.Record.Offset != 2 {
		t.Fatalf("got %d", c.Record.Offset)
	}
	e.none("orders", 0)
	e.propose(&meta.UpdateTopicIf{ID: tp.ID, UpdateTopic: meta.UpdateTopic{Name: "orders", Partitions: 1, MaxInFlight: 5, MaxAckedAhead: 1024}})
	if c := e.one("orders", 0); c.Record.Offset != 3 {
		t.Fatalf("after raising the cap got %d", c.Record.Offset)
	}
}

// ensure that a handle used on another topic, or naming a partition the
// topic does not have, answers 410, and that an unknown topic answers 404
// first (conformance 123, 124).
func TestForeignHandles(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	a := e.createTopic("a", 3, nil, nil)
	e.createTopic("b", 3, nil, nil)
	e.produce(a, 1, "x")
	d := e.one("a", 1)
	wantErr(t, e.svc.Ack(context.Background(), "b", *d.Handle), domain.ErrLeaseGone)
	wantErr(t, e.svc.Ack(context.Background(), "a", domain.ReceiptHandle{Partition: 7, Offset: 0, Nonce: 1}), domain.ErrLeaseGone)
	wantErr(t, e.svc.Ack(context.Background(), "missing", *d.Handle), domain.ErrTopicNotFound)
	e.ack("a", d)
}

// ensure that 20 parallel consumers draining one partition never receive
// the same offset twice while leases are live (conformance 117).
func TestParallelConsumersNeverShareAnOffset(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	payloads := make([]string, 200)
	for i := range payloads {
		payloads[i] = "m"
	}
	e.produce(tp, 0, payloads...)
	got := make(chan int64, 400)
	done := make(chan struct{})
	for range 20 {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				ds, err := e.svc.Consume(context.Background(), consume.Request{Topic: "orders", Identity: "x"})
				if err != nil || len(ds) == 0 {
					return
				}
				got <- ds[0].Record.Offset
			}
		}()
	}
	for range 20 {
		<-done
	}
	close(got)
	seen := map[int64]bool{}
	for o := range got {
		if seen[o] {
			t.Fatalf("offset %d delivered twice", o)
		}
		seen[o] = true
	}
	if len(seen) != 200 {
		t.Fatalf("%d offsets delivered, want 200", len(seen))
	}
}

// ensure that a partition a move froze reserves no new lease while the
// leases already out still settle, that InFlight counts them for the
// source's drain, and that leases resume once the freeze ends (internals.md
// §11.3 step 3).
func TestFrozenPartitionLeasesNothingNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1")
	d0 := e.one("orders", 0)
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
	if n := e.svc.InFlight(ref); n != 1 {
		t.Fatalf("in flight %d, want 1", n)
	}
	e.logs.SetFrozen(ref, true)
	e.none("orders", 0)
	e.ack("orders", d0)
	if n := e.svc.InFlight(ref); n != 0 {
		t.Fatalf("in flight %d after the ack, want 0", n)
	}
	e.logs.SetFrozen(ref, false)
	if d1 := e.one("orders", 0); d1.Record.Offset != 1 {
		t.Fatalf("after the freeze: offset %d, want 1", d1.Record.Offset)
	}
}

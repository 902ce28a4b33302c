package consume_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// ladder is the redelivery policy these tests use: 2 s after the first
// delivery, doubling, capped at 5 s, no jitter.
var ladder = &meta.Redelivery{InitialMs: 2000, Multiplier: 2, MaxMs: 5000}

// setRedelivery sets (or with nil clears) t's redelivery backoff.
func (e *env) setRedelivery(t meta.Topic, r *meta.Redelivery) {
	e.t.Helper()
	e.propose(&meta.SetTopicRedelivery{Name: t.Name, ID: t.ID, Redelivery: r})
}

// heldFor asserts that offset off of topic/0 comes back exactly after
// wait: nothing at wait-1ms, then a redelivery with a fresh handle.
func (e *env) heldFor(topic string, off int64, wait time.Duration, old domain.ReceiptHandle) domain.Delivery {
	e.t.Helper()
	e.clock.Advance(wait - time.Millisecond)
	e.none(topic, 0)
	e.clock.Advance(time.Millisecond)
	d := e.one(topic, 0)
	if d.Record.Offset != off || d.Handle.Nonce == old.Nonce {
		e.t.Fatalf("after %v: got offset %d handle %v, want offset %d with a new handle than %v", wait, d.Record.Offset, d.Handle, off, old)
	}
	return d
}

// ensure that on a topic with a redelivery backoff a plain nack holds the
// message for the policy's wait, growing per delivery up to the cap
// (2 s, 4 s, then 5 s), while later messages keep flowing; the hold counts
// as a deferred lease in the stats.
func TestPlainNackWaitsForTheBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setRedelivery(tp, ladder)
	e.produce(tp, 0, "x", "y")
	d := e.one("orders", 0)
	for i, wait := range []time.Duration{2 * time.Second, 4 * time.Second, 5 * time.Second} {
		if err := e.svc.Nack(context.Background(), "orders", *d.Handle); err != nil {
			t.Fatal(err)
		}
		wantErr(t, e.svc.Ack(context.Background(), "orders", *d.Handle), domain.ErrLeaseGone)
		if st := e.svc.Stats(); len(st) != 1 || st[0].Deferred != 1 {
			t.Fatalf("nack %d: stats while held %+v", i+1, st)
		}
		if i == 0 { // the held offset does not block the next one
			e.ack("orders", e.one("orders", 0))
		}
		d = e.heldFor("orders", 0, wait, *d.Handle)
	}
	e.ack("orders", d)
	if got := e.metrics.Count("nack orders"); got != 3 {
		t.Fatalf("nack metric %d, want 3", got)
	}
	if st := e.svc.Stats(); st[0].Deferred != 0 || st[0].InFlight != 0 || st[0].Committed != 1 {
		t.Fatalf("stats after the ack %+v", st)
	}
}

// ensure that a batch nack backs off each message by its own delivery
// count.
func TestNackBatchBacksOffEachMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setRedelivery(tp, ladder)
	e.produce(tp, 0, "a", "b")
	d0 := e.one("orders", 0)
	if err := e.svc.Nack(context.Background(), "orders", *d0.Handle); err != nil {
		t.Fatal(err)
	}
	d1 := e.one("orders", 0)
	d0 = e.heldFor("orders", 0, 2*time.Second, *d0.Handle) // second delivery of 0, first of 1
	errs, err := e.svc.AckBatch(context.Background(), "orders", []domain.ReceiptHandle{*d0.Handle, *d1.Handle}, consume.OpNack)
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("%v %v", errs, err)
	}
	e.clock.Advance(2 * time.Second)
	if d := e.one("orders", 0); d.Record.Offset != 1 {
		t.Fatalf("after 2 s: got offset %d, want 1 (0 waits 4 s)", d.Record.Offset)
	}
	e.none("orders", 0)
	e.clock.Advance(2 * time.Second)
	if d := e.one("orders", 0); d.Record.Offset != 0 {
		t.Fatalf("after 4 s: got offset %d, want 0", d.Record.Offset)
	}
}

// ensure that a lease that lapses (the visibility timeout passes) is held
// for the backoff's wait from the lapse, not freed at the lapse.
func TestLapsedLeaseWaitsForTheBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(ct *meta.CreateTopic) { ct.VisibilityTimeoutMs = 1000 }, nil)
	e.setRedelivery(tp, ladder)
	e.produce(tp, 0, "x")
	d := e.one("orders", 0)
	e.clock.Advance(time.Second) // the lease lapses
	e.none("orders", 0)
	wantErr(t, e.svc.Ack(context.Background(), "orders", *d.Handle), domain.ErrLeaseGone)
	if st := e.svc.Stats(); st[0].Deferred != 1 {
		t.Fatalf("stats after the lapse %+v", st)
	}
	d = e.heldFor("orders", 0, 2*time.Second, *d.Handle)
	// the second lapse waits 4 s; one lapsed longer ago than that is free at once
	e.clock.Advance(time.Second + 4*time.Second - time.Millisecond)
	e.none("orders", 0)
	e.clock.Advance(time.Millisecond)
	d = e.one("orders", 0)
	e.clock.Advance(time.Second + 8*time.Second) // third lapse: 5 s (capped), long over
	if again := e.one("orders", 0); again.Record.Offset != 0 || again.Handle.Nonce == d.Handle.Nonce {
		t.Fatalf("a lease lapsed long ago: got %v after %v", again.Handle, d.Handle)
	}
}

// ensure that a parked consumer gets a backed-off message once its wait is
// over: the expiry sweep frees the hold and wakes it.
func TestParkedConsumerGetsTheMessageAfterTheBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{PurgeInterval: 10 * time.Millisecond})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.setRedelivery(tp, ladder)
	e.produce(tp, 0, "only")
	d := e.one("orders", -1)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	if err := e.svc.Nack(t.Context(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	e.none("orders", 0)
	e.clock.Advance(2 * time.Second)
	r := <-got
	if r.err != nil || len(r.ds) != 1 || r.ds[0].Record.Offset != 0 || r.ds[0].Handle.Nonce == d.Handle.Nonce {
		t.Fatalf("%+v", r)
	}
}

// ensure that a nack with an explicit delay keeps its own delay on a topic
// with a backoff (explicit wins), shorter or longer than the backoff's.
func TestNackAfterOverridesTheBackoff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setRedelivery(tp, ladder)
	e.produce(tp, 0, "x")
	d := e.one("orders", 0)
	if err := e.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Delay: 500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	d = e.heldFor("orders", 0, 500*time.Millisecond, *d.Handle)
	if err := e.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Delay: 9 * time.Second}); err != nil {
		t.Fatal(err)
	}
	e.heldFor("orders", 0, 9*time.Second, *d.Handle)
}

// ensure that a topic without a policy redelivers at once after a nack,
// and that clearing a policy makes the next nack plain again.
func TestNackWithoutBackoffRedeliversAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x")
	d := e.one("orders", 0)
	if err := e.svc.Nack(context.Background(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	d = e.one("orders", 0)
	if st := e.svc.Stats(); st[0].Deferred != 0 {
		t.Fatalf("stats %+v", st)
	}
	e.setRedelivery(tp, ladder)
	if err := e.svc.Nack(context.Background(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	e.none("orders", 0)
	d = e.heldFor("orders", 0, 2*time.Second, *d.Handle)
	e.setRedelivery(tp, nil)
	if err := e.svc.Nack(context.Background(), "orders", *d.Handle); err != nil {
		t.Fatal(err)
	}
	if again := e.one("orders", 0); again.Record.Offset != 0 {
		t.Fatalf("policy cleared: got offset %d", again.Record.Offset)
	}
}

// ensure that a reservation given back without reaching its consumer (here
// trimmed from an over-large batch reply) is no nack: it is available at
// once and is not counted as a delivery for the backoff.
func TestGivenBackReservationIsNotBackedOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("escaped", 1, nil, nil)
	e.setRedelivery(tp, ladder)
	ctl := strings.Repeat("\x01", 1<<20) // 6 encoded bytes per stored byte
	e.produce(tp, 0, ctl, ctl)
	if ds := e.consume(consume.Request{Topic: "escaped", Mode: consume.ModeBatch, Max: 10}); len(ds) != 1 {
		t.Fatalf("%d envelopes answered, want 1", len(ds))
	}
	d := e.one("escaped", 0)
	if d.Record.Offset != 1 {
		t.Fatalf("released record not available at once: got %d", d.Record.Offset)
	}
	if err := e.svc.Nack(context.Background(), "escaped", *d.Handle); err != nil {
		t.Fatal(err)
	}
	e.heldFor("escaped", 1, 2*time.Second, *d.Handle) // its first delivery's wait
}

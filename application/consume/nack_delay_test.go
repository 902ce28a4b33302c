package consume_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that a nack with a delay (api-extensions.md "Nack with a delay")
// kills the handle at once, keeps the message out of delivery until the
// delay is over, and then redelivers it with a new handle, while other
// messages keep flowing.
func TestNackAfterHoldsTheMessageForItsDelay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x", "y")
	d := e.one("orders", 0)
	if err := e.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Delay: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	wantErr(t, e.svc.Ack(context.Background(), "orders", *d.Handle), domain.ErrLeaseGone)
	if st := e.svc.Stats(); len(st) != 1 || st[0].Deferred != 1 || st[0].InFlight != 1 {
		t.Fatalf("stats while held %+v", st)
	}
	if next := e.one("orders", 0); next.Record.Offset != 1 {
		t.Fatalf("while 0 is held, got offset %d", next.Record.Offset)
	} else {
		e.ack("orders", next)
	}
	e.clock.Advance(10*time.Second - time.Millisecond)
	e.none("orders", 0)
	e.clock.Advance(time.Millisecond)
	again := e.one("orders", 0)
	if again.Record.Offset != 0 || again.Handle.Nonce == d.Handle.Nonce {
		t.Fatalf("redelivery %v after %v", again.Handle, d.Handle)
	}
	if st := e.svc.Stats(); st[0].Deferred != 0 || st[0].InFlight != 1 {
		t.Fatalf("stats after the delay %+v", st)
	}
	e.ack("orders", again)
	if got := e.metrics.Count("nack orders"); got != 1 {
		t.Fatalf("nack metric %d", got)
	}
}

// ensure that a batch nack with a delay holds every handle of the batch,
// answers each one (a dead handle 410), and that a delay of 0 is a plain
// nack: the message is back at once.
func TestNackBatchAfterAnswersEachHandle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "a", "b", "c")
	d0, d1 := e.one("orders", 0), e.one("orders", 0)
	dead := *d1.Handle
	dead.Nonce++
	errs, err := e.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d0.Handle, dead}, consume.NackOptions{Delay: time.Minute})
	if err != nil || errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) {
		t.Fatalf("%v %v", errs, err)
	}
	d2 := e.one("orders", 0)
	if d2.Record.Offset != 2 {
		t.Fatalf("got offset %d, want 2 while 0 is held and 1 leased", d2.Record.Offset)
	}
	if _, err := e.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d2.Handle}, consume.NackOptions{}); err != nil {
		t.Fatal(err)
	}
	if back := e.one("orders", 0); back.Record.Offset != 2 {
		t.Fatalf("a zero delay: got offset %d, want 2 at once", back.Record.Offset)
	} else if err := e.svc.NackWith(context.Background(), "orders", *back.Handle, consume.NackOptions{Delay: 999 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	if back := e.one("orders", 0); back.Record.Offset != 2 {
		t.Fatalf("under a millisecond: got offset %d, want 2 at once", back.Record.Offset)
	}
}

// ensure that a delay outside 0..NackDelayMax is refused as a bad argument
// before any lease is touched.
func TestNackAfterRefusesADelayOutOfRange(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x")
	d := e.one("orders", 0)
	for _, delay := range []time.Duration{-time.Millisecond, consume.NackDelayMax + time.Millisecond} {
		wantErr(t, e.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Delay: delay}), domain.ErrInvalidArgument)
		_, err := e.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d.Handle}, consume.NackOptions{Delay: delay})
		wantErr(t, err, domain.ErrInvalidArgument)
	}
	e.ack("orders", d) // the lease stands
}

// ensure that a delayed nack of another node's partition goes to its owner
// with the delay (NackRemote), and that the owner's refusal comes back.
func TestNackAfterIsForwardedWithItsDelay(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	h := domain.ReceiptHandle{Partition: 1, Offset: 3, Nonce: 4}
	if err := c.svc.NackWith(context.Background(), "t", h, consume.NackOptions{Delay: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	refused := domain.ReceiptHandle{Partition: 1, Offset: 4, Nonce: 5}
	c.fwd.RefuseHandle(refused, domain.Refuse(domain.ErrPrecondition, "older owner"))
	errs, err := c.svc.NackBatchWith(context.Background(), "t", []domain.ReceiptHandle{refused}, consume.NackOptions{Delay: time.Second})
	if err != nil || !errors.Is(errs[0], domain.ErrPrecondition) {
		t.Fatalf("%v %v", errs, err)
	}
	s := c.fwd.Settles()
	if len(s) != 2 || s[0].Node != "node-2" || s[0].Op != ports.SettleNack || s[0].Delay != 5*time.Second || s[1].Delay != time.Second {
		t.Fatalf("settles %+v", s)
	}
}

// ensure that the owner view nacks with a delay on its own partitions and
// never forwards.
func TestOwnerNackBatchAfterStaysLocal(t *testing.T) {
	c := newCluster(t)
	tp := c.split("t", self, "node-2")
	c.produce(tp, 0, `"a"`)
	d := c.one("t", 0)
	o := c.svc.Owner()
	remote := domain.ReceiptHandle{Partition: 1, Offset: 0, Nonce: 1}
	errs, err := o.NackBatchWith(context.Background(), "t", []domain.ReceiptHandle{*d.Handle, remote}, consume.NackOptions{Delay: time.Minute})
	if err != nil || errs[0] != nil || !errors.Is(errs[1], domain.ErrNotOwner) {
		t.Fatalf("%v %v", errs, err)
	}
	c.none("t", 0)
	if n := len(c.fwd.Settles()); n != 0 {
		t.Fatalf("%d forwards from the owner view", n)
	}
}

// ensure that a nack whose delay rounds to 0 ms wakes a parked consumer at
// once like a plain nack, rather than waiting for the expiry sweep.
func TestNackAfterUnderAMillisecondWakesAParkedConsumer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{PurgeInterval: time.Hour})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "only")
	d := e.one("orders", -1)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	if err := e.svc.NackWith(t.Context(), "orders", *d.Handle, consume.NackOptions{Delay: 999 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil || len(r.ds) != 1 || r.ds[0].Record.Offset != 0 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
}

package consume_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/ports"
)

// nackWith nacks d with opts.
func (e *env) nackWith(topic string, d domain.Delivery, opts consume.NackOptions) {
	e.t.Helper()
	if err := e.svc.NackWith(context.Background(), topic, *d.Handle, opts); err != nil {
		e.t.Fatalf("nack %s with %+v: %v", d.Handle, opts, err)
	}
}

// ensure that the reason of a message's last nack that gave one (single
// or batch, with a delay or not) is written into its dead letter, and that
// a nack without a reason keeps the one before it.
func TestNackReasonLandsInTheDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 3)
	e.produce(tp, 0, "poison")
	e.nackWith("orders", e.one("orders", 0), consume.NackOptions{Reason: "attempt 1"})
	d := e.one("orders", 0)
	errs, err := e.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d.Handle},
		consume.NackOptions{Delay: time.Second, Reason: "attempt 2: ünicode"})
	if err != nil || errs[0] != nil {
		t.Fatalf("batch nack: %v %v", errs, err)
	}
	e.clock.Advance(time.Second)
	e.nack("orders", e.one("orders", 0)) // no reason: the last one stands
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.Reason != "attempt 2: ünicode" || l.ReceiveCount != 3 {
		t.Fatalf("letter %+v", l)
	}
}

// ensure that a reason survives a restart with the receive counts.
func TestNackReasonSurvivesARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 1)
	e.produce(tp, 0, "poison")
	e.nackWith("orders", e.one("orders", 0), consume.NackOptions{Reason: "bad schema"})
	e.restart(e.offsets.Crash(), false)
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.Reason != "bad schema" {
		t.Fatalf("letter %+v", l)
	}
}

// ensure that a nack with a reason of another node's partition goes to
// its owner as a NackRemote even without a delay, single and batch, and
// that the owner, playing back what was forwarded, writes the reason into
// the dead letter.
func TestForwardedNackReasonLandsInTheDeadLetter(t *testing.T) {
	t.Parallel()
	owner := newEnv(t, consume.Options{})
	tp := owner.createTopic("orders", 1, nil, nil)
	owner.setDeadLetter(tp, "orders-dlq", 2)
	owner.produce(tp, 0, "poison")
	gw := newCluster(t)
	gw.split("orders", "node-2")
	playBack := func(i int, want string) {
		t.Helper()
		fs := gw.fwd.Settles()
		if len(fs) != i+1 {
			t.Fatalf("forwards %+v", fs)
		}
		f := fs[i]
		if f.Node != "node-2" || f.Op != ports.SettleNack || f.Delay != 0 || f.Reason != want {
			t.Fatalf("forward %d: %+v", i, f)
		}
		errs, err := owner.svc.Owner().NackBatchWith(context.Background(), f.Topic, f.Handles, consume.NackOptions{Delay: f.Delay, Reason: f.Reason})
		if err != nil || len(errs) != 1 || errs[0] != nil {
			t.Fatalf("owner: %v %v", errs, err)
		}
	}
	d := owner.one("orders", 0)
	if err := gw.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Reason: "first"}); err != nil {
		t.Fatal(err)
	}
	playBack(0, "first")
	d = owner.one("orders", 0)
	errs, err := gw.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d.Handle}, consume.NackOptions{Reason: "second"})
	if err != nil || errs[0] != nil {
		t.Fatalf("%v %v", errs, err)
	}
	playBack(1, "second")
	owner.none("orders", 0)
	if l := owner.letters(1)[0]; l.Reason != "second" || l.ReceiveCount != 2 {
		t.Fatalf("letter %+v", l)
	}
}

// ensure that a topic without a dead-letter policy ignores a reason: the
// nack is done, nothing is written.
func TestNackReasonWithoutPolicyWritesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x")
	e.nackWith("orders", e.one("orders", 0), consume.NackOptions{Reason: "ignored"})
	if d := e.one("orders", 0); d.Record.Offset != 0 {
		t.Fatalf("after the nack got offset %d", d.Record.Offset)
	}
	if appends, _ := e.receives.Counts(); appends != 0 {
		t.Fatalf("%d receive-log appends without a policy", appends)
	}
}

// ensure that a reason that cannot be made durable still nacks (the
// message comes back, its letter without the reason), and that a dead
// handle's reason is not written.
func TestNackReasonNotPersistedStillNacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 2)
	e.produce(tp, 0, "poison")
	d := e.one("orders", 0)
	e.receives.FailNextAppend(errors.New("disk full"))
	e.nackWith("orders", d, consume.NackOptions{Reason: "lost"})
	d = e.one("orders", 0)
	if d.Record.Offset != 0 {
		t.Fatalf("after the nack got offset %d, want 0 again", d.Record.Offset)
	}
	before, _ := e.receives.Counts()
	wantErr(t, e.svc.NackWith(context.Background(), "orders", domain.ReceiptHandle{Partition: 0, Offset: 0, Nonce: d.Handle.Nonce + 1},
		consume.NackOptions{Reason: "dead handle"}), domain.ErrLeaseGone)
	if after, _ := e.receives.Counts(); after != before {
		t.Fatalf("a dead handle's reason was appended (%d appends, then %d)", before, after)
	}
	e.nack("orders", d)
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.Reason != "" {
		t.Fatalf("letter %+v, want no reason", l)
	}
}

// ensure that a reason over deadletter.ReasonBytesMax or not UTF-8 is
// refused before any lease is touched, and the longest is taken.
func TestNackReasonOutOfBoundsIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 1)
	e.produce(tp, 0, "x")
	d := e.one("orders", 0)
	for _, r := range []string{strings.Repeat("x", deadletter.ReasonBytesMax+1), "\xff"} {
		wantErr(t, e.svc.NackWith(context.Background(), "orders", *d.Handle, consume.NackOptions{Reason: r}), domain.ErrInvalidArgument)
		_, err := e.svc.NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d.Handle}, consume.NackOptions{Reason: r})
		wantErr(t, err, domain.ErrInvalidArgument)
		_, err = e.svc.Owner().NackBatchWith(context.Background(), "orders", []domain.ReceiptHandle{*d.Handle}, consume.NackOptions{Reason: r})
		wantErr(t, err, domain.ErrInvalidArgument)
	}
	longest := strings.Repeat("é", deadletter.ReasonBytesMax/2)
	e.nackWith("orders", d, consume.NackOptions{Reason: longest})
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.Reason != longest {
		t.Fatalf("letter reason of %d bytes", len(l.Reason))
	}
}

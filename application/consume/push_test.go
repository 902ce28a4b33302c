package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// newPushCluster is a token cluster whose fake nodes take pushes.
func newPushCluster(t *testing.T) *cluster {
	t.Helper()
	c := newTokenCluster(t)
	c.fwd.RefusePushes(nil)
	return c
}

// acceptTokens leaves a 10 s token of topic from each of nodes here.
func (c *cluster) acceptTokens(t *testing.T, topic string, nodes ...string) {
	t.Helper()
	for _, n := range nodes {
		if err := c.svc.AcceptTokens(n, tokenFor(topic, 10*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
}

func (c *cluster) wantPushes(t *testing.T, what string, n int) []fake.TokenCall {
	t.Helper()
	eventually(t, 5*time.Second, what, func() bool { return len(c.fwd.Pushes()) == n })
	return c.fwd.Pushes()
}

// internals.md §5.5 "A notification carries its record": the owner spends
// a token by reserving one record for its node and pushing it, leased,
// with the notification; nothing is held back and no claim follows. The
// record counts as consumed here once the node took it.
func TestTokenPushCarriesTheRecord(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"a"`)
	p := c.wantPushes(t, "one push", 1)[0]
	if p.Node != "node-2" || p.From != self || p.Topic != "t" || len(p.Pushed) != 1 ||
		string(p.Pushed[0].Record.Payload) != `"a"` || p.Pushed[0].Handle == nil {
		t.Fatalf("push %+v", p)
	}
	if n := len(c.fwd.Notifications()); n != 0 {
		t.Fatalf("%d notifications besides the push", n)
	}
	c.none("t", -1) // leased for node-2's consumer
	eventually(t, 5*time.Second, "the pushed record counted as consumed", func() bool { return c.metrics.Count("consumed t/0") == 1 })
	if err := c.svc.Ack(context.Background(), "t", *p.Pushed[0].Handle); err != nil {
		t.Fatalf("ack of the pushed record: %v", err)
	}
}

// A node that passes gets nothing: the owner releases the record at once
// and offers it to the next token, and with none left a local consumer
// takes it.
func TestTokenPushPassReleasesTheRecord(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.fwd.PassNotifications("node-2", true)
	c.acceptTokens(t, "t", "node-2", "node-3")
	c.produce(tp, 0, `"a"`)
	ps := c.wantPushes(t, "node-2 passes, node-3 gets it", 2)
	if ps[0].Node != "node-2" || ps[1].Node != "node-3" || ps[1].Pushed[0].Record.Offset != 0 {
		t.Fatalf("pushes %+v", ps)
	}
	c.fwd.PassNotifications("node-3", true)
	c.acceptTokens(t, "t", "node-3")
	c.produce(tp, 0, `"b"`)
	c.wantPushes(t, "node-3 passes the second record", 3)
	eventually(t, 5*time.Second, "the passed record back for a local consumer", func() bool {
		ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Identity: "u"})
		return err == nil && len(ds) == 1 && string(ds[0].Record.Payload) == `"b"`
	})
}

// A push that never left, or that its node refused, releases its record at
// once; one whose answers were lost three times leaves it leased (the node
// may have handed it to a consumer) until the visibility timeout brings it
// back.
func TestTokenPushFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		leased bool
	}{
		{"not sent", fake.ErrFakePeerNotSent, false},
		{"refused", domain.Refuse(domain.ErrInvalidArgument, "no such consumer"), false},
		{"no answer", fake.ErrFakePeerFailure, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newPushCluster(t)
			tp := c.split("t", self)
			c.fwd.RefusePushes(tc.err)
			c.acceptTokens(t, "t", "node-2")
			c.produce(tp, 0, `"a"`)
			if !tc.leased {
				eventually(t, 5*time.Second, "the record released", func() bool {
					ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Identity: "u"})
					return err == nil && len(ds) == 1
				})
				return
			}
			c.wantPushes(t, "the push and its two retries", 3)
			c.none("t", -1)
			c.clock.Advance(31 * time.Second)
			if d := c.one("t", -1); string(d.Record.Payload) != `"a"` {
				t.Fatalf("after the visibility timeout: %+v", d)
			}
		})
	}
}

// A node that predates pushes is notified instead (the record held back
// for its claim), and is not pushed to again for a while.
func TestTokenPushToAnOlderNodeNotifies(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.fwd.RefusePushes(domain.ErrNotImplemented)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "the notification", "node-2")
	c.none("t", -1) // held for the claim
	if ds := c.claim(t, "t"); len(ds) != 1 {
		t.Fatalf("claim got %+v", ds)
	}
	c.fwd.RefusePushes(nil)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"b"`)
	c.wantNotified(t, "notified again, not pushed", "node-2", "node-2")
	if n := len(c.fwd.Pushes()); n != 1 {
		t.Fatalf("%d pushes; want only the one refused", n)
	}
}

// The requesting side: a pushed record goes to a consumer parked for other
// owners' records, with no claim; with none parked the push is a pass. With
// nobody else parked, the answer does not ask for the token again.
func TestPushedRecordGoesToAParkedConsumer(t *testing.T) {
	c := newPushCluster(t)
	c.split("t", self, "node-2")
	if taken, _ := c.svc.Pushed("node-2", "t", []domain.Delivery{remoteDelivery("t", 1, 3, 33)}); taken {
		t.Fatal("a push with nobody parked was taken")
	}
	got := c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "the consumer parked", func() bool { return c.svc.Parked() == 1 })
	if taken, again := c.svc.Pushed("node-2", "t", []domain.Delivery{remoteDelivery("t", 1, 4, 44)}); !taken || again != 0 {
		t.Fatal("the parked consumer passed")
	}
	if ds := <-got; len(ds) != 1 || ds[0].Record.Offset != 4 || ds[0].Handle.Nonce != 44 {
		t.Fatalf("consumer got %+v", ds)
	}
	for _, f := range c.fwd.Consumes() {
		if f.Req.Claim {
			t.Fatalf("a claim after a push: %+v", f)
		}
	}
}

// A batch consumer on a gateway (it owns none of the topic) fills the rest
// of its batch from the owner that pushed it one record, as the claim a
// notification led to did.
func TestPushToAGatewayBatchTopsUp(t *testing.T) {
	c := newPushCluster(t)
	c.split("t", "node-2", "node-2")
	got := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Mode: consume.ModeBatch, Max: 5, Wait: 5 * time.Second, Identity: "u"})
		got <- ds
	}()
	eventually(t, 5*time.Second, "the consumer parked", func() bool { return c.svc.Parked() == 1 })
	before := len(c.fwd.Consumes())
	c.fwd.Offer("node-2", remoteDelivery("t", 0, 1, 11), remoteDelivery("t", 1, 1, 12))
	if taken, _ := c.svc.Pushed("node-2", "t", []domain.Delivery{remoteDelivery("t", 0, 0, 10)}); !taken {
		t.Fatal("the parked consumer passed")
	}
	if ds := <-got; len(ds) != 3 {
		t.Fatalf("batch got %d records; want the pushed one and two more", len(ds))
	}
	top := c.fwd.Consumes()[before:]
	if len(top) != 1 || top[0].Node != "node-2" || !top[0].Req.LocalOnly || top[0].Req.Mode != ports.ConsumeBatch || top[0].Req.Max != 4 {
		t.Fatalf("top-up %+v", top)
	}
}

// A record pushed as its consumer gives up is never dropped: the consumer
// returns it, or it goes back to its owner as a nack (the hand-over and
// the cancellation race on purpose, many times).
func TestPushedRecordOutlivesAConsumerGivingUp(t *testing.T) {
	c := newPushCluster(t)
	c.split("t", self, "node-2")
	for i := range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan []domain.Delivery, 1)
		go func() {
			ds, _ := c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
			got <- ds
		}()
		eventually(t, 5*time.Second, "the consumer parked", func() bool { return c.svc.Parked() == 1 })
		d := remoteDelivery("t", 1, int64(i), uint64(i+1))
		go cancel()
		taken, _ := c.svc.Pushed("node-2", "t", []domain.Delivery{d})
		ds := <-got
		if !taken || (len(ds) == 1 && ds[0].Handle.Nonce == d.Handle.Nonce) {
			continue
		}
		nacked := false
		for _, st := range c.fwd.Settles() {
			if st.Node == "node-2" && st.Op == ports.SettleNack && len(st.Handles) == 1 && st.Handles[0] == *d.Handle {
				nacked = true
			}
		}
		if !nacked {
			t.Fatalf("round %d: the pushed record was taken, not delivered (%+v) and not nacked to its owner", i, ds)
		}
	}
}

// A node whose other consumers are still parked asks for its token again
// in the push's answer, lasting the longest of their remaining waits plus
// the grace: the next consumer parking there spares that owner its probe.
func TestPushedAnswerAsksForTheTokenAgain(t *testing.T) {
	c := newPushCluster(t)
	c.split("t", self, "node-2")
	first := c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "the first consumer parked", func() bool { return c.svc.Parked() == 1 })
	second := c.parkConsumer("t", 3*time.Second)
	eventually(t, 5*time.Second, "both consumers parked", func() bool { return c.svc.Parked() == 2 })
	taken, again := c.svc.Pushed("node-2", "t", []domain.Delivery{remoteDelivery("t", 1, 4, 44)})
	if !taken || again < 2*time.Second || again > 3250*time.Millisecond {
		t.Fatalf("push answered %v, again %v; want taken and about 3.25 s (the second consumer's wait)", taken, again)
	}
	select {
	case ds := <-first:
		if len(ds) != 1 {
			t.Fatalf("the first consumer got %+v", ds)
		}
	case ds := <-second:
		t.Fatalf("the second consumer got %+v before the first", ds)
	}
	probes := c.probes()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 2 * time.Second, Identity: "u"}); err == nil {
		t.Fatal("consume got an answer from nowhere")
	}
	if n := c.probes() - probes; n != 0 {
		t.Fatalf("%d probes of node-2, which holds the token asked again", n)
	}
	if taken, again := c.svc.Pushed("node-2", "t", []domain.Delivery{remoteDelivery("t", 1, 5, 55)}); !taken || again != 0 {
		t.Fatalf("the last parked consumer's push answered %v, again %v; want taken, not again", taken, again)
	}
	<-second
}

// The owner keeps the token a taken push's answer asked for again: the
// next record goes to the same node with no registration in between.
func TestTokenAskedAgainIsKept(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.fwd.AskAgain(10 * time.Second)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"a"`)
	c.wantPushes(t, "the first push", 1)
	c.produce(tp, 0, `"b"`)
	ps := c.wantPushes(t, "the second push, through the token asked again", 2)
	if ps[1].Node != "node-2" || string(ps[1].Pushed[0].Record.Payload) != `"b"` {
		t.Fatalf("second push %+v", ps[1])
	}
}

// A push whose answer was lost is sent again; the second answer settles
// it (here: taken, so the record stays leased for that node's consumer
// and counts as consumed once).
func TestTokenPushSentAgainAfterALostAnswer(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.fwd.FailNext(fake.ErrFakePeerFailure)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"a"`)
	ps := c.wantPushes(t, "the push and its retry", 2)
	if *ps[0].Pushed[0].Handle != *ps[1].Pushed[0].Handle {
		t.Fatalf("the retry carried another lease: %+v, %+v", ps[0].Pushed[0].Handle, ps[1].Pushed[0].Handle)
	}
	eventually(t, 5*time.Second, "the pushed record counted as consumed", func() bool { return c.metrics.Count("consumed t/0") == 1 })
	c.none("t", -1)
}

// The requesting side of a push sent again: a record one of its consumers
// took already is answered taken, not handed to a second consumer.
func TestPushSentAgainIsNotHandedTwice(t *testing.T) {
	c := newPushCluster(t)
	c.split("t", self, "node-2")
	first := c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "the first consumer parked", func() bool { return c.svc.Parked() == 1 })
	c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "both consumers parked", func() bool { return c.svc.Parked() == 2 })
	d := remoteDelivery("t", 1, 4, 44)
	for i := range 2 {
		if taken, _ := c.svc.Pushed("node-2", "t", []domain.Delivery{d}); !taken {
			t.Fatalf("push %d passed", i)
		}
	}
	if ds := <-first; len(ds) != 1 || ds[0].Record.Offset != 4 {
		t.Fatalf("the first consumer got %+v", ds)
	}
	if n := c.svc.Parked(); n != 1 {
		t.Fatalf("%d consumers parked; want the second still waiting", n)
	}
}

// A topic with a dead-letter policy is notified, not pushed to: reserving
// counts a receive durably, and a pass would spend one.
func TestDeadLetterTopicIsNotPushed(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self)
	c.setDeadLetter(tp, "t-dlq", 3)
	c.acceptTokens(t, "t", "node-2")
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "the notification", "node-2")
	if n := len(c.fwd.Pushes()); n != 0 {
		t.Fatalf("%d pushes of a dead-letter topic's record", n)
	}
}

// A token the pump took but could not spend (a local consumer took the
// record it counted before the pump could reserve it) goes back first in
// line, so the next record still reaches its node.
func TestTokenRestoredWhenNothingCouldBeReserved(t *testing.T) {
	c := newPushCluster(t)
	tp := c.split("t", self, self)
	c.produce(tp, 0, `"a"`)
	taken := make(chan []domain.Delivery, 1)
	c.reader.holdNextBounds(func() { // the pump's estimate reads partition 0, then 1
		c.reader.holdNextBounds(func() {
			ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Identity: "u"})
			taken <- ds
		})
	})
	c.acceptTokens(t, "t", "node-2")
	if ds := <-taken; len(ds) != 1 {
		t.Fatalf("the local consumer took %+v during the estimate", ds)
	}
	c.produce(tp, 0, `"b"`)
	p := c.wantPushes(t, "the next record pushed through the restored token", 1)[0]
	if p.Node != "node-2" || string(p.Pushed[0].Record.Payload) != `"b"` {
		t.Fatalf("push %+v", p)
	}
}

package consume_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

// A consumer arriving while every other owner holds a live token from
// this node parks without probing them: they offer what they have through
// the token, after their own parked consumers, so a probe could only race
// those. Once a notification has spent the token, the next consumer probes
// again.
func TestLiveTokenSparesTheProbe(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	got := make(chan []domain.Delivery, 2)
	consumer := func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		got <- ds
	}
	go consumer()
	eventually(t, 5*time.Second, "the first consumer's token at node-2", func() bool { return len(c.fwd.Registrations()) == 1 })
	go consumer()
	eventually(t, 5*time.Second, "both consumers parked", func() bool { return c.svc.Parked() == 2 })
	if probes := c.probes(); probes != 1 {
		t.Fatalf("%d probes; want only the first consumer's", probes)
	}
	for i := range 2 {
		c.fwd.Offer("node-2", remoteDelivery("t", 1, int64(i), uint64(i+1)))
		if !c.svc.Notified("node-2", "t") {
			t.Fatalf("notification %d passed", i)
		}
		if ds := <-got; len(ds) != 1 {
			t.Fatalf("consumer %d got %+v", i, ds)
		}
	}
	// Nobody is parked, and the last notification spent the token: the
	// next consumer probes before it parks.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"}); err == nil {
		t.Fatal("consume got an answer from nowhere")
	}
	if probes := c.probes(); probes != 2 {
		t.Fatalf("%d probes; want one more once the token was spent", probes)
	}
}

// A consume without a wait never parks, so a live token does not spare
// its probe: it asks the other owners once, as before.
func TestNoWaitConsumeProbesDespiteALiveToken(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	parked := make(chan struct{})
	go func() {
		defer close(parked)
		_, _ = c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
	}()
	eventually(t, 5*time.Second, "a token at node-2", func() bool { return len(c.fwd.Registrations()) == 1 })
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 7, 77))
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Identity: "u"})
	if err != nil || len(ds) != 1 || ds[0].Record.Offset != 7 {
		t.Fatalf("no-wait consume: %+v, %v; want the record node-2 offered", ds, err)
	}
	cancel()
	<-parked
}

// A node that owns every partition of the topic (a single node) has no
// owner to probe or poll, so its waiting consumer does not leave and
// rejoin the queue at the polling pace (100 ms doubling): each rejoin sent
// the pump through the topic again. It re-reads the placements every 2 s.
func TestConsumerOnANodeOwningEverythingWaitsWithoutPolling(t *testing.T) {
	c := newCluster(t) // no token carrier: no keeper reading the topic every 500 ms
	c.run()
	c.split("t", self, self)
	got := c.longPoll(t.Context(), consume.Request{Topic: "t", Wait: 1500 * time.Millisecond, Identity: "u"})
	c.parked(1)
	before := c.topicReads.count("t")
	if r := <-got; r.err != nil || len(r.ds) != 0 || r.at < 1400*time.Millisecond {
		t.Fatalf("consume: %+v; want nothing after its wait", r)
	}
	// Once parked: the pump's round for the join, and a second when the
	// join named the topic while the pump's first round was under way;
	// polling rejoined at 100, 300 and 700 ms and read the topic at each.
	if reads := c.topicReads.count("t") - before; reads > 2 {
		t.Fatalf("the topic was read %d times while one consumer waited 1.5 s; want at most 2", reads)
	}
	if probes := c.probes(); probes != 0 {
		t.Fatalf("%d probes with no other owner", probes)
	}
}

// The probe is spared owner by owner: once a notification has spent the
// token at one owner, the next consumer probes that owner alone, not the
// others still holding a live token from this node.
func TestLiveTokenSparesItsOwnerOnly(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2", "node-3")
	got := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		got <- ds
	}()
	eventually(t, 5*time.Second, "tokens at node-2 and node-3", func() bool { return len(c.fwd.Registrations()) == 2 })
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 0, 1))
	if !c.svc.Notified("node-2", "t") {
		t.Fatal("the notification passed")
	}
	if ds := <-got; len(ds) != 1 {
		t.Fatalf("the consumer got %+v", ds)
	}
	before := c.probesOf()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"}); err == nil {
		t.Fatal("consume got an answer from nowhere")
	}
	after := c.probesOf()
	if n := after["node-2"] - before["node-2"]; n != 1 {
		t.Fatalf("node-2, whose token was spent, probed %d times; want 1", n)
	}
	if n := after["node-3"] - before["node-3"]; n != 0 {
		t.Fatalf("node-3, holding a live token, probed %d times; want 0", n)
	}
}

// probesOf counts the probes each owner got so far.
func (c *cluster) probesOf() map[string]int {
	n := map[string]int{}
	for _, f := range c.fwd.Consumes() {
		if f.Req.LocalOnly && !f.Req.Claim {
			n[f.Node]++
		}
	}
	return n
}

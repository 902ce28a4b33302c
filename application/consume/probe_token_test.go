package consume_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

// internals.md §5.5: a long poll's empty probe carries its token, so the
// consumer parks without a separate TokenRegister round trip; the token
// lasts the rest of the wait plus the grace, and a notification through it
// is claimed as before.
func TestEmptyProbeLeavesTheToken(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	got := c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "the consumer parked", func() bool { return c.svc.Parked() == 1 })
	regs := c.fwd.Registrations()
	if len(regs) != 1 || !regs[0].Probe || regs[0].Node != "node-2" || regs[0].From != self ||
		regs[0].Regs[0].Topic != "t" || regs[0].Regs[0].TTL <= 4*time.Second || regs[0].Regs[0].TTL > 5*time.Second+250*time.Millisecond {
		t.Fatalf("registrations %+v: want the one the probe carried", regs)
	}
	c.wantClaimed(t, got, "node-2", remoteDelivery("t", 1, 3, 33))
}

// A probe that returns records, or a consume that will not wait, carries
// no token: nobody will park on it.
func TestProbeWithoutParkingLeavesNoToken(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 5, 55))
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
	if err != nil || len(ds) != 1 {
		t.Fatalf("got %+v %v", ds, err)
	}
	if ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Identity: "u"}); err != nil || len(ds) != 0 {
		t.Fatalf("a consume without wait got %+v %v", ds, err)
	}
	if regs := c.fwd.Registrations(); len(regs) != 0 {
		t.Fatalf("registrations %+v: want none", regs)
	}
}

// An owner may notify before its answer to the probe that left the token
// arrives. That notification spent the token: the requester must not
// count the token as live when the answer comes, or its consumers would
// park on a token the owner no longer holds, until the 2 s re-probe.
func TestTokenSpentBeforeTheProbeAnswerIsRegisteredAgain(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	notified := make(chan bool, 4)
	c.fwd.OnRegister(func(r fake.TokenCall) {
		if r.Probe {
			c.clock.Advance(time.Millisecond) // the notification comes after the probe left
			notified <- c.svc.Notified(r.Node, "t")
		}
	})
	t.Cleanup(func() { c.fwd.OnRegister(nil) })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
	}()
	if <-notified {
		t.Fatal("claimed for a consumer that had not parked")
	}
	eventually(t, 5*time.Second, "a registration after the spent one", func() bool {
		regs := c.fwd.Registrations()
		return len(regs) == 2 && regs[0].Probe && !regs[1].Probe
	})
	cancel()
	<-done
}

// The owner's side: a probe carrying a token that finds nothing leaves the
// token, which the next record spends; one that hands out a record leaves
// none (a later token holder is notified first).
func TestOwnerKeepsTheTokenOfAnEmptyProbeOnly(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	probe := func(from string) []domain.Delivery {
		t.Helper()
		ds, err := c.svc.Owner().Consume(context.Background(), consume.Request{Topic: "t", LocalOnly: true, Identity: "peer",
			TokenFor: from, TokenTTL: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	if ds := probe("node-2"); len(ds) != 0 {
		t.Fatalf("an empty partition handed out %+v", ds)
	}
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "node-2 by the token its probe left", "node-2")
	if ds := c.claim(t, "t"); len(ds) != 1 {
		t.Fatalf("node-2's claim got %+v", ds)
	}

	c.produce(tp, 0, `"b"`) // no token is left to spend on it
	if ds := probe("node-3"); len(ds) != 1 {
		t.Fatalf("node-3's probe got %+v, want the record", ds)
	}
	if err := c.svc.AcceptTokens("node-4", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"c"`)
	c.wantNotified(t, "node-4: node-3's probe was answered, so it left no token", "node-2", "node-4")
}

// A probe's token is refused like a registration: a node cannot leave a
// token with itself.
func TestOwnerRefusesAProbeTokenFromItself(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self)
	_, err := c.svc.Owner().Consume(context.Background(), consume.Request{Topic: "t", LocalOnly: true, Identity: "peer",
		TokenFor: self, TokenTTL: time.Second})
	if err == nil {
		t.Fatal("a token for the owner itself was accepted")
	}
	if got := fmt.Sprint(c.notifiedNodes()); got != "[]" {
		t.Fatalf("notified %s", got)
	}
}

// With two owners lacking a token, only the last probe of the round
// carries one (the consumer parks right after its answer); the other
// owner gets its token by TokenRegister once the consumer parked. An owner
// that still holds a live token is not probed at all.
func TestOnlyTheLastProbeCarriesTheToken(t *testing.T) {
	c := newTokenCluster(t)
	c.createTopic("t", 3, nil, func(p int32) string { return [...]string{self, "node-2", "node-3"}[p] })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
	}()
	eventually(t, 5*time.Second, "two tokens", func() bool { return len(c.fwd.Registrations()) == 2 })
	regs, probes := c.fwd.Registrations(), c.fwd.Consumes()
	if len(probes) != 2 || !regs[0].Probe || regs[0].Node != probes[1].Node || regs[1].Probe || regs[1].Node != probes[0].Node {
		t.Fatalf("probes %+v, registrations %+v: want the second probe to carry its owner's token and the first owner registered", probes, regs)
	}
	cancel()
	<-done

	// node-2's token is spent; node-3's is still live: node-2 alone is
	// probed, with a token.
	c.svc.Notified("node-2", "t")
	ctx, cancel = context.WithCancel(context.Background())
	done = make(chan struct{})
	go func() {
		defer close(done)
		_, _ = c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 4 * time.Second, Identity: "u"})
	}()
	eventually(t, 5*time.Second, "the new token at node-2", func() bool { return len(c.fwd.Registrations()) == 3 })
	regs, probes = c.fwd.Registrations(), c.fwd.Consumes()[2:]
	if len(probes) != 1 || probes[0].Node != "node-2" || !regs[2].Probe || regs[2].Node != "node-2" {
		t.Fatalf("second round: probes %+v, registrations %+v", probes, regs)
	}
	cancel()
	<-done
}

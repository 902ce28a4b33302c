package fake_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the fake forwarder answers offers in order, per-handle
// refusals, and one armed whole-call failure.
func TestPeerForwarderScripts(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerForwarder()
	ctx := context.Background()
	f.Offer("n2", domain.Delivery{Topic: "t", Partition: 1})
	if ds, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); err != nil || len(ds) != 1 {
		t.Fatalf("offer: %v, %v", ds, err)
	}
	if ds, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); err != nil || len(ds) != 0 {
		t.Fatalf("empty: %v, %v", ds, err)
	}
	h := domain.ReceiptHandle{Partition: 1, Offset: 2, Nonce: 3}
	f.RefuseHandle(h, domain.ErrLeaseGone)
	errs, err := f.SettleRemote(ctx, "n2", "t", []domain.ReceiptHandle{{Nonce: 1}, h}, ports.SettleAck)
	if err != nil || errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) {
		t.Fatalf("settle: %v, %v", errs, err)
	}
	f.FailNext(nil)
	if _, err := f.SettleRemote(ctx, "n2", "t", []domain.ReceiptHandle{h}, ports.SettleAck); !errors.Is(err, fake.ErrFakePeerFailure) {
		t.Fatalf("armed failure: %v", err)
	}
	if len(f.Consumes()) != 2 || len(f.Settles()) != 2 {
		t.Fatalf("recorded %d consumes, %d settles", len(f.Consumes()), len(f.Settles()))
	}
}

// ensure that FailNext injects each class of ports.PeerForwarder's errors
// for one call: not sent, sent without an answer, and the owner's refusal.
func TestPeerForwarderFailureClasses(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerForwarder()
	ctx := context.Background()
	hs := []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}
	cases := []struct {
		arm, class, notClass error
	}{
		{fake.ErrFakePeerNotSent, domain.ErrNotSent, domain.ErrNoAnswer},
		{nil, domain.ErrNoAnswer, domain.ErrNotSent},
		{domain.ErrUnavailable, domain.ErrUnavailable, domain.ErrNoAnswer},
	}
	for _, c := range cases {
		f.FailNext(c.arm)
		_, err := f.SettleRemote(ctx, "n2", "t", hs, ports.SettleAck)
		if !errors.Is(err, c.class) || errors.Is(err, c.notClass) {
			t.Fatalf("armed %v: settle %v", c.arm, err)
		}
		f.FailNext(c.arm)
		f.Offer("n2", domain.Delivery{Topic: "t"})
		if _, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); !errors.Is(err, c.class) {
			t.Fatalf("armed %v: consume %v", c.arm, err)
		}
		if ds, err := f.ConsumeRemote(ctx, "n2", ports.RemoteConsume{Topic: "t"}); err != nil || len(ds) != 1 {
			t.Fatalf("the failed consume took the offer: %v, %v", ds, err)
		}
	}
}

// ensure that the fake records token registrations and notifications,
// refuses registrations when told, and answers notifications claimed or
// with a pass.
func TestPeerForwarderTokens(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerForwarder()
	ctx := context.Background()
	regs := []ports.TokenRegistration{{Topic: "t", TTL: 5 * time.Second}}
	if err := f.RegisterTokens(ctx, "n2", "n1", regs); err != nil {
		t.Fatal(err)
	}
	f.RefuseTokens(domain.ErrNotImplemented)
	if err := f.RegisterTokens(ctx, "n2", "n1", regs); !errors.Is(err, domain.ErrNotImplemented) {
		t.Fatalf("refused registration: %v", err)
	}
	if r := f.Registrations(); len(r) != 2 || r[0].Node != "n2" || r[0].From != "n1" || r[0].Regs[0] != regs[0] {
		t.Fatalf("registrations %+v", r)
	}
	if claimed, err := f.NotifyToken(ctx, "n3", "n1", "t"); !claimed || err != nil {
		t.Fatalf("default notification: %v, %v", claimed, err)
	}
	f.PassNotifications("n3", true)
	if claimed, _ := f.NotifyToken(ctx, "n3", "n1", "t"); claimed {
		t.Fatal("a passing node claimed")
	}
	if n := f.Notifications(); len(n) != 2 || n[1].Topic != "t" || n[1].From != "n1" {
		t.Fatalf("notifications %+v", n)
	}
}

// ensure that a probe leaving a token answers as a consume, records the
// token only when the answer is empty (Probe set), and leaves none while
// tokens are refused.
func TestPeerForwarderProbeLeavingToken(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerForwarder()
	ctx := context.Background()
	d := domain.Delivery{Topic: "t", Record: domain.Record{Offset: 1}}
	f.Offer("n2", d)
	if ds, left, err := f.ProbeLeavingToken(ctx, "n2", "n1", ports.RemoteConsume{Topic: "t", Wait: time.Second}, time.Second); err != nil || len(ds) != 1 || left {
		t.Fatalf("probe with an offer: %+v %v %v", ds, left, err)
	}
	if ds, left, err := f.ProbeLeavingToken(ctx, "n2", "n1", ports.RemoteConsume{Topic: "t"}, 2*time.Second); err != nil || len(ds) != 0 || !left {
		t.Fatalf("empty probe: %+v %v %v", ds, left, err)
	}
	f.RefuseTokens(domain.ErrNotImplemented)
	if _, left, err := f.ProbeLeavingToken(ctx, "n2", "n1", ports.RemoteConsume{Topic: "t"}, time.Second); err != nil || left {
		t.Fatalf("probe while tokens are refused: %v %v", left, err)
	}
	r := f.Registrations()
	if len(r) != 1 || !r[0].Probe || r[0].Node != "n2" || r[0].From != "n1" || r[0].Regs[0].TTL != 2*time.Second {
		t.Fatalf("registrations %+v", r)
	}
	cs := f.Consumes()
	if len(cs) != 3 || !cs[0].Req.LocalOnly || cs[0].Req.Wait != 0 {
		t.Fatalf("consumes %+v: want three local-only probes without a wait", cs)
	}
}

// Pushes are recorded with their deliveries, answered taken unless the
// node passes, and refused whole once RefusePushes armed an error.
func TestPeerForwarderPushes(t *testing.T) {
	f := fake.NewPeerForwarder()
	ds := []domain.Delivery{{Topic: "t", Record: domain.Record{Offset: 4}}}
	if taken, again, err := f.PushToken(context.Background(), "node-2", "node-1", "t", ds); !taken || again != 0 || err != nil {
		t.Fatalf("push: %v %v %v", taken, again, err)
	}
	f.AskAgain(time.Second)
	if taken, again, err := f.PushToken(context.Background(), "node-2", "node-1", "t", ds); !taken || again != time.Second || err != nil {
		t.Fatalf("push asking again: %v %v %v", taken, again, err)
	}
	f.PassNotifications("node-2", true)
	if taken, again, err := f.PushToken(context.Background(), "node-2", "node-1", "t", ds); taken || again != 0 || err != nil {
		t.Fatalf("pass: %v %v %v", taken, again, err)
	}
	f.RefusePushes(domain.ErrNotImplemented)
	if _, _, err := f.PushToken(context.Background(), "node-3", "node-1", "t", ds); !errors.Is(err, domain.ErrNotImplemented) {
		t.Fatalf("refused push: %v", err)
	}
	ps := f.Pushes()
	if len(ps) != 4 || ps[0].Node != "node-2" || ps[0].From != "node-1" || ps[0].Topic != "t" || ps[0].Pushed[0].Record.Offset != 4 || ps[3].Node != "node-3" {
		t.Fatalf("pushes %+v", ps)
	}
}

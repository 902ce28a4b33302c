package consume_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// cluster is one node (self) of a cluster over the fakes: its peers are
// node-2 and node-3, reached through a fake forwarder.
type cluster struct {
	*env
	fwd *fake.PeerForwarder
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	fwd := fake.NewPeerForwarder()
	e := newEnv(t, consume.Options{})
	e.peers = fwd
	_ = e.svc.Close()
	e.svc = e.newService(e.offsets)
	for _, id := range []string{self, "node-2", "node-3"} {
		e.propose(&meta.MemberJoin{ID: id, Addr: id + ":8080", ClusterAddr: id + ":9090"})
	}
	return &cluster{env: e, fwd: fwd}
}

// kill marks node dead in the member table.
func (c *cluster) kill(node string) { c.propose(&meta.MemberDead{ID: node}) }

// split creates t with partition p owned by owners[p].
func (c *cluster) split(name string, owners ...string) meta.Topic {
	return c.createTopic(name, int32(len(owners)), nil, func(p int32) string { return owners[p] })
}

func remoteDelivery(topic string, p int32, off int64, nonce uint64) domain.Delivery {
	return domain.Delivery{Topic: topic, Partition: p, Record: domain.Record{Offset: off, Payload: []byte(`"r"`)},
		Handle: &domain.ReceiptHandle{Partition: p, Offset: off, Nonce: nonce}}
}

// Story F12, internals.md §5.5: a pinned consume of a live remote owner's
// partition is forwarded there with its wait, never answered 421.
func TestPinnedConsumeIsForwardedToItsOwner(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 7, 99))
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Wait: time.Second, Identity: "u"})
	if err != nil || len(ds) != 1 || ds[0].Record.Offset != 7 {
		t.Fatalf("got %v %v, want the owner's offset 7", ds, err)
	}
	got := c.fwd.Consumes()
	if len(got) != 1 || got[0].Node != "node-2" || got[0].Req.Mode != ports.ConsumePinned ||
		got[0].Req.Partition != 1 || got[0].Req.Wait != time.Second || got[0].Req.LocalOnly {
		t.Fatalf("forwards %+v", got)
	}
}

// ensure that a secured consume forwarded to its owner carries the user it
// acts for, so the owner's consume cap keys on that user.
func TestForwardedConsumeCarriesIdentity(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 7, 99))
	req := consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "alice", ForwardIdentity: "alice"}
	if _, err := c.svc.Consume(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := c.fwd.Consumes(); len(got) != 1 || got[0].Req.Identity != "alice" {
		t.Fatalf("forwards %+v, want identity alice", got)
	}
}

// api-conformance 225, story F12: pinned consume, replay, ack, extend and
// nack whose owner is marked dead answer domain.ErrOwnerDown (503) without
// an RPC.
func TestDeadOwnerAnswersOwnerDown(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	c.kill("node-2")
	ctx := context.Background()
	_, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "u"})
	wantErr(t, err, domain.ErrOwnerDown)
	_, err = c.svc.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModeReplay, Partition: 1, Identity: "u"})
	wantErr(t, err, domain.ErrOwnerDown)
	_, err = c.svc.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModeBatch, Pinned: true, Partition: 1, Max: 5, Identity: "u"})
	wantErr(t, err, domain.ErrOwnerDown)
	h := domain.ReceiptHandle{Partition: 1, Offset: 0, Nonce: 1}
	for _, op := range []consume.Op{consume.OpAck, consume.OpExtend, consume.OpNack} {
		wantErr(t, c.svc.Settle(ctx, "t", h, op), domain.ErrOwnerDown)
	}
	if n := len(c.fwd.Consumes()) + len(c.fwd.Settles()); n != 0 {
		t.Fatalf("%d forwards to a dead owner", n)
	}
}

// api.md §2.15, §3.3: a forward with no answer is domain.ErrOwnerNoAnswer
// (502); an ack's message says it may have been applied.
func TestForwardWithoutAnswerIsOwnerNoAnswer(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	ctx := context.Background()
	c.fwd.FailNext(nil)
	_, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "u"})
	wantErr(t, err, domain.ErrOwnerNoAnswer)
	c.fwd.FailNext(nil)
	err = c.svc.Ack(ctx, "t", domain.ReceiptHandle{Partition: 1, Offset: 0, Nonce: 1})
	wantErr(t, err, domain.ErrOwnerNoAnswer)
	var r *domain.Refusal
	if !errors.As(err, &r) || r.Detail != "the partition owner did not answer; the ack may have been applied; retry" {
		t.Fatalf("ack no-answer message: %v", err)
	}
}

// api.md §2.15, §3.3: an ack, extend or nack whose forward never left
// this node is domain.ErrOwnerNotReached (503: nothing was applied); a
// consume forward that never left is 502 like one without an answer.
func TestForwardNotSentIsOwnerNotReached(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	ctx := context.Background()
	h := domain.ReceiptHandle{Partition: 1, Offset: 0, Nonce: 1}
	for _, op := range []consume.Op{consume.OpAck, consume.OpExtend, consume.OpNack} {
		c.fwd.FailNext(fake.ErrFakePeerNotSent)
		err := c.svc.Settle(ctx, "t", h, op)
		wantErr(t, err, domain.ErrOwnerNotReached)
		var r *domain.Refusal
		if !errors.As(err, &r) || r.Detail != "the ack did not reach the partition owner and was not applied; retry" {
			t.Fatalf("op %d: not-sent message: %v", op, err)
		}
		if errors.Is(err, domain.ErrOwnerNoAnswer) || errors.Is(err, domain.ErrNotSent) {
			t.Fatalf("op %d: %v carries another class", op, err)
		}
	}
	c.fwd.FailNext(fake.ErrFakePeerNotSent)
	_, err := c.svc.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "u"})
	wantErr(t, err, domain.ErrOwnerNoAnswer)
}

// api.md §2.15.1: in a batch ack, an owner whose forward never left
// answers 503 for its handles only; one without an answer 502 for its
// handles only; local handles are applied either way.
func TestBatchAckTransportClassesPerOwner(t *testing.T) {
	c := newCluster(t)
	tp := c.split("t", self, "node-2")
	c.produce(tp, 0, `"a"`, `"b"`, `"c"`)
	hs := []domain.ReceiptHandle{{Partition: 1, Offset: 0, Nonce: 1}, *c.one("t", 0).Handle}
	for _, tc := range []struct {
		arm, want error
	}{{fake.ErrFakePeerNotSent, domain.ErrOwnerNotReached}, {fake.ErrFakePeerFailure, domain.ErrOwnerNoAnswer}} {
		c.fwd.FailNext(tc.arm)
		errs, err := c.svc.AckBatch(context.Background(), "t", hs, consume.OpAck)
		if err != nil || !errors.Is(errs[0], tc.want) || errs[1] != nil {
			t.Fatalf("armed %v: got %v, %v; want %v then nil", tc.arm, errs, err, tc.want)
		}
		hs[1] = *c.one("t", 0).Handle
	}
}

// ports.PeerForwarder: whatever is not a transport class is the owner's
// answer, passed through unchanged, including refusals no list names.
func TestOwnerRefusalOfAnyKindPassesThrough(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	h := domain.ReceiptHandle{Partition: 1, Offset: 3, Nonce: 4}
	for _, refusal := range []error{domain.ErrLogPoisoned, domain.Refuse(domain.ErrConflict, "owner says no")} {
		c.fwd.RefuseHandle(h, refusal)
		err := c.svc.Ack(context.Background(), "t", h)
		if !errors.Is(err, refusal) || errors.Is(err, domain.ErrOwnerNoAnswer) || errors.Is(err, domain.ErrOwnerNotReached) {
			t.Fatalf("owner refusal %v came back as %v", refusal, err)
		}
	}
}

// internals.md §5.5: the owner's refusals come back unchanged (a lapsed
// lease stays 410, not 502).
func TestOwnerRefusalPassesThrough(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	h := domain.ReceiptHandle{Partition: 1, Offset: 3, Nonce: 4}
	c.fwd.RefuseHandle(h, domain.ErrLeaseGone)
	wantErr(t, c.svc.Ack(context.Background(), "t", h), domain.ErrLeaseGone)
	if err := c.svc.Extend(context.Background(), "t", domain.ReceiptHandle{Partition: 1, Offset: 5, Nonce: 6}); err != nil {
		t.Fatal(err)
	}
	s := c.fwd.Settles()
	if len(s) != 2 || s[1].Node != "node-2" || s[1].Op != ports.SettleExtend {
		t.Fatalf("settles %+v", s)
	}
}

// internals.md §5.5: a request that arrived from a peer is never
// forwarded again; the owner view answers 421 for a partition it lost.
func TestOwnerViewNeverForwards(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	o := c.svc.Owner()
	ctx := context.Background()
	_, err := o.Consume(ctx, consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "peer"})
	wantErr(t, err, domain.ErrNotOwner)
	h := domain.ReceiptHandle{Partition: 1, Offset: 0, Nonce: 1}
	wantErr(t, o.Settle(ctx, "t", h, consume.OpAck), domain.ErrNotOwner)
	errs, err := o.AckBatch(ctx, "t", []domain.ReceiptHandle{h}, consume.OpAck)
	if err != nil || len(errs) != 1 || !errors.Is(errs[0], domain.ErrNotOwner) {
		t.Fatalf("owner batch: %v %v", errs, err)
	}
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 0, 1))
	if ds, err := o.Consume(ctx, consume.Request{Topic: "t", Identity: "peer"}); err != nil || len(ds) != 0 {
		t.Fatalf("owner queue consume: %v %v, want nothing and no probe", ds, err)
	}
	if n := len(c.fwd.Consumes()) + len(c.fwd.Settles()); n != 0 {
		t.Fatalf("%d forwards from the owner view", n)
	}
}

// api.md §2.14: a replay goes to the owner and comes back without a lease;
// an empty answer is "not written yet" (204).
func TestReplayIsForwardedToItsOwner(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2")
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 4, 8))
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Mode: consume.ModeReplay, Partition: 1, Offset: 4, Identity: "u"})
	if err != nil || len(ds) != 1 || ds[0].Handle != nil || ds[0].Record.Offset != 4 {
		t.Fatalf("replay: %v %v", ds, err)
	}
	if f := c.fwd.Consumes(); f[0].Req.Mode != ports.ConsumeReplay || f[0].Req.Offset != 4 {
		t.Fatalf("forward %+v", f[0])
	}
	_, err = c.svc.Replay(context.Background(), "t", 1, 5)
	wantErr(t, err, domain.ErrOffsetNotWritten)
}

// api.md §2.14: a queue consume tries its own partitions first and asks
// the other owners only when they hold nothing.
func TestQueueConsumeTriesLocalPartitionsFirst(t *testing.T) {
	c := newCluster(t)
	tp := c.split("t", self, "node-2", "node-3")
	c.produce(tp, 0, `"local"`)
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 0, 5))
	if d := c.one("t", -1); d.Partition != 0 {
		t.Fatalf("got partition %d, want the local 0", d.Partition)
	}
	if n := len(c.fwd.Consumes()); n != 0 {
		t.Fatalf("%d probes while a local record was ready", n)
	}
	d := c.one("t", -1)
	if d.Partition != 1 {
		t.Fatalf("got partition %d, want node-2's 1", d.Partition)
	}
	for _, f := range c.fwd.Consumes() {
		if !f.Req.LocalOnly || f.Req.Wait != 0 || f.Req.Mode != ports.ConsumeQueue {
			t.Fatalf("probe %+v: want local_only with no wait", f)
		}
	}
}

// internals.md §5.5: dead owners are not probed.
func TestQueueConsumeSkipsDeadOwners(t *testing.T) {
	c := newCluster(t)
	c.split("t", self, "node-2", "node-3")
	c.kill("node-3")
	c.none("t", -1)
	for _, f := range c.fwd.Consumes() {
		if f.Node != "node-2" {
			t.Fatalf("probed %s", f.Node)
		}
	}
	if len(c.fwd.Consumes()) != 1 {
		t.Fatalf("probes %+v, want one of node-2", c.fwd.Consumes())
	}
}

// api.md §2.14, internals.md §5.5: while a queue consume waits it probes
// the other owners again, so a record landing there is found within the
// wait.
func TestQueueConsumeReprobesWhileWaiting(t *testing.T) {
	c := newCluster(t)
	c.run()
	c.split("t", self, "node-2")
	done := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		done <- ds
	}()
	eventually(t, 2*time.Second, "first probe", func() bool { return len(c.fwd.Consumes()) >= 1 })
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 2, 3))
	select {
	case ds := <-done:
		if len(ds) != 1 || ds[0].Partition != 1 {
			t.Fatalf("got %v", ds)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the waiting consume never re-probed")
	}
}

// api-conformance 226: a queue long poll on a topic whose owners are all
// dead waits out its wait (204 after about that long, not at once).
func TestQueueConsumeHoldsWhenAllOwnersAreDead(t *testing.T) {
	c := newCluster(t)
	c.run()
	c.split("t", "node-2", "node-3")
	c.kill("node-2")
	c.kill("node-3")
	start := time.Now()
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 300 * time.Millisecond, Identity: "u"})
	if err != nil || len(ds) != 0 {
		t.Fatalf("got %v %v", ds, err)
	}
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Fatalf("answered after %v, want the whole wait", el)
	}
	if n := len(c.fwd.Consumes()); n != 0 {
		t.Fatalf("%d probes of dead owners", n)
	}
}

// api.md §2.14: while waiting, a record produced on a local partition is
// still served (the local long poll goes on between probes).
func TestQueueConsumeWaitsLocallyBetweenProbes(t *testing.T) {
	c := newCluster(t)
	c.run()
	tp := c.split("t", self, "node-2")
	done := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		done <- ds
	}()
	eventually(t, 2*time.Second, "parked", func() bool { return c.svc.Parked() == 1 })
	c.produce(tp, 0, `"x"`)
	select {
	case ds := <-done:
		if len(ds) != 1 || ds[0].Partition != 0 {
			t.Fatalf("got %v", ds)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("local record not served while waiting")
	}
}

// api.md §2.14.3: a batch on a node owning part of the topic asks the
// other owners for one message; a gateway asks an owner for the whole
// batch and passes its answer through.
func TestBatchConsumeProbeShapes(t *testing.T) {
	c := newCluster(t)
	c.split("mixed", self, "node-2")
	c.fwd.Offer("node-2", remoteDelivery("mixed", 1, 0, 1))
	ds := c.consume(consume.Request{Topic: "mixed", Mode: consume.ModeBatch, Max: 10})
	if len(ds) != 1 {
		t.Fatalf("mixed: %d deliveries", len(ds))
	}
	if f := c.fwd.Consumes(); len(f) != 1 || f[0].Req.Mode != ports.ConsumeQueue || f[0].Req.Max != 0 {
		t.Fatalf("mixed probe %+v, want one message", f)
	}
	c.split("gw", "node-2", "node-3")
	c.fwd.Offer("node-3", remoteDelivery("gw", 1, 0, 1), remoteDelivery("gw", 1, 1, 2))
	c.fwd.Offer("node-2", remoteDelivery("gw", 0, 0, 1), remoteDelivery("gw", 0, 1, 2))
	ds = c.consume(consume.Request{Topic: "gw", Mode: consume.ModeBatch, Max: 10})
	if len(ds) != 2 {
		t.Fatalf("gateway: %d deliveries, want the owner's 2", len(ds))
	}
	f := c.fwd.Consumes()[1]
	if f.Req.Mode != ports.ConsumeBatch || f.Req.Max != 10 || !f.Req.LocalOnly {
		t.Fatalf("gateway relay %+v, want the whole batch", f)
	}
	if n := len(c.fwd.Consumes()); n != 2 {
		t.Fatalf("%d forwards, want one owner asked (never several to fill a batch)", n)
	}
}

// internals.md §5.9, api.md §2.15.1: a batch ack applies local handles
// here, sends each live owner its handles in one forward, answers 503 for
// a dead owner's without an RPC, and keeps the request's order.
func TestBatchAckGroupsHandlesByOwner(t *testing.T) {
	c := newCluster(t)
	tp := c.split("t", self, "node-2", "node-3")
	c.kill("node-3")
	c.produce(tp, 0, `"a"`)
	local := c.one("t", 0)
	gone := domain.ReceiptHandle{Partition: 1, Offset: 9, Nonce: 9}
	c.fwd.RefuseHandle(gone, domain.ErrLeaseGone)
	hs := []domain.ReceiptHandle{
		{Partition: 1, Offset: 1, Nonce: 1}, *local.Handle, {Partition: 2, Offset: 0, Nonce: 1}, gone,
		{Partition: 7, Offset: 0, Nonce: 1},
	}
	errs, err := c.svc.AckBatch(context.Background(), "t", hs, consume.OpAck)
	if err != nil {
		t.Fatal(err)
	}
	want := []error{nil, nil, domain.ErrOwnerDown, domain.ErrLeaseGone, domain.ErrLeaseGone}
	for i := range want {
		if (want[i] == nil) != (errs[i] == nil) || (want[i] != nil && !errors.Is(errs[i], want[i])) {
			t.Fatalf("handle %d: got %v, want %v", i, errs[i], want[i])
		}
	}
	s := c.fwd.Settles()
	if len(s) != 1 || s[0].Node != "node-2" || len(s[0].Handles) != 2 || s[0].Handles[1] != gone {
		t.Fatalf("settles %+v, want one forward of node-2's two handles", s)
	}
}

// api.md §2.15.1: a transport failure answers 502 for that owner's
// handles only.
func TestBatchAckTransportFailureIsPerOwner(t *testing.T) {
	c := newCluster(t)
	tp := c.split("t", self, "node-2")
	c.produce(tp, 0, `"a"`)
	local := c.one("t", 0)
	c.fwd.FailNext(nil)
	errs, err := c.svc.AckBatch(context.Background(), "t",
		[]domain.ReceiptHandle{{Partition: 1, Offset: 0, Nonce: 1}, *local.Handle, {Partition: 1, Offset: 1, Nonce: 1}}, consume.OpAck)
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(errs[0], domain.ErrOwnerNoAnswer) || errs[1] != nil || !errors.Is(errs[2], domain.ErrOwnerNoAnswer) {
		t.Fatalf("got %v", errs)
	}
}

// Without a forwarder the service stays single-node: another owner's
// partition is 421 (domain.ErrNotOwner), as before the cluster issue.
func TestNoForwarderKeepsNotOwner(t *testing.T) {
	e := newEnv(t, consume.Options{})
	e.createTopic("t", 2, nil, func(p int32) string { return []string{self, "node-2"}[p] })
	_, err := e.svc.Consume(context.Background(), consume.Request{Topic: "t", Mode: consume.ModePinned, Partition: 1, Identity: "u"})
	wantErr(t, err, domain.ErrNotOwner)
	wantErr(t, e.svc.Ack(context.Background(), "t", domain.ReceiptHandle{Partition: 1, Nonce: 1}), domain.ErrNotOwner)
}

// The owner view serves the node RPC's consume and settle handlers, so it
// keeps the Service's method set for them.
var _ interface {
	Consume(context.Context, consume.Request) ([]domain.Delivery, error)
	Settle(context.Context, string, domain.ReceiptHandle, consume.Op) error
	AckBatch(context.Context, string, []domain.ReceiptHandle, consume.Op) ([]error, error)
} = (*consume.Owner)(nil)

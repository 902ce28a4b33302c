package consume_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// newTokenCluster is newCluster with delivery tokens carried by the fake
// forwarder, and the service's loops running.
func newTokenCluster(t *testing.T) *cluster {
	t.Helper()
	c := newCluster(t)
	c.tokens = c.fwd
	c.fwd.RefusePushes(domain.ErrNotImplemented) // the notify-and-claim path; push_test.go pushes
	_ = c.svc.Close()
	c.svc = c.newService(c.offsets)
	c.run()
	return c
}

func tokenFor(topic string, ttl time.Duration) []ports.TokenRegistration {
	return []ports.TokenRegistration{{Topic: topic, TTL: ttl}}
}

// notifiedNodes lists the nodes notified so far, in order.
func (c *cluster) notifiedNodes() []string {
	var out []string
	for _, n := range c.fwd.Notifications() {
		out = append(out, n.Node)
	}
	return out
}

func (c *cluster) wantNotified(t *testing.T, what string, nodes ...string) {
	t.Helper()
	want := fmt.Sprint(nodes)
	eventually(t, 5*time.Second, what, func() bool { return fmt.Sprint(c.notifiedNodes()) == want })
}

// parkConsumer runs a consumer of topic with wait in the background; what
// it gets arrives on the channel.
func (c *cluster) parkConsumer(topic string, wait time.Duration) <-chan []domain.Delivery {
	got := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: topic, Wait: wait, Identity: "u"})
		got <- ds
	}()
	return got
}

// wantClaimed offers d at owner, notifies this node from owner and wants
// the consumer parked on got to claim it.
func (c *cluster) wantClaimed(t *testing.T, got <-chan []domain.Delivery, owner string, d domain.Delivery) {
	t.Helper()
	c.fwd.Offer(owner, d)
	if !c.svc.Notified(owner, d.Topic) {
		t.Fatal("a parked consumer passed")
	}
	if ds := <-got; len(ds) != 1 || ds[0].Record.Offset != d.Record.Offset {
		t.Fatalf("consumer got %+v, want offset %d", ds, d.Record.Offset)
	}
}

// claim is node's claim after a notification, as the node RPC serves it.
func (c *cluster) claim(t *testing.T, topic string) []domain.Delivery {
	t.Helper()
	ds, err := c.svc.Owner().Consume(context.Background(), consume.Request{Topic: topic, Claim: true, Identity: "peer"})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// internals.md §5.5: a record committed on a partition with a token from
// another node makes the pump notify that node once (single use), naming
// this node; a re-registration replaces the old token, never stacks.
func TestTokenNotifiesOnceOnNewRecord(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "one notification", "node-2")
	if n := c.fwd.Notifications()[0]; n.From != self || n.Topic != "t" {
		t.Fatalf("notification %+v", n)
	}
	if ds := c.claim(t, "t"); len(ds) != 1 || ds[0].Record.Offset != 0 {
		t.Fatalf("claim got %+v", ds)
	}
	c.produce(tp, 0, `"b"`)
	if err := c.svc.AcceptTokens("node-3", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.wantNotified(t, "node-3 only: node-2's token was spent", "node-2", "node-3")
}

// internals.md §5.5, story F41: a notified record is held back: neither a
// local consumer nor a peer's plain probe takes it; the claim, which
// retires the hold on arrival, does.
func TestTokenHoldKeepsRecordForItsClaim(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"held"`)
	c.wantNotified(t, "the notification", "node-2")
	if ds := c.consume(consume.Request{Topic: "t"}); len(ds) != 0 {
		t.Fatalf("a local consumer took the held record: %+v", ds)
	}
	probe, err := c.svc.Owner().Consume(context.Background(), consume.Request{Topic: "t", Identity: "peer"})
	if err != nil || len(probe) != 0 {
		t.Fatalf("a plain probe took the held record: %+v %v", probe, err)
	}
	if ds := c.claim(t, "t"); len(ds) != 1 || string(ds[0].Record.Payload) != `"held"` {
		t.Fatalf("claim got %+v", ds)
	}
}

// internals.md §5.5: a hold whose claim never comes lapses at its deadline
// (about 1 s): the record is then free for anyone.
func TestTokenHoldLapses(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "the notification", "node-2")
	c.none("t", -1)
	c.clock.Advance(time.Second)
	if d := c.one("t", -1); string(d.Record.Payload) != `"a"` {
		t.Fatalf("after the hold lapsed: %+v", d)
	}
}

// internals.md §5.5: a node that passes retires its hold at once and the
// record is offered to the next token holder; the same record is never
// promised to two nodes at once.
func TestTokenPassOffersTheNextHolder(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	c.fwd.PassNotifications("node-2", true)
	for _, n := range []string{"node-2", "node-3"} {
		if err := c.svc.AcceptTokens(n, tokenFor("t", 10*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	c.produce(tp, 0, `"a"`)
	c.wantNotified(t, "node-2 passes, node-3 gets it", "node-2", "node-3")
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"b"`)
	c.wantNotified(t, "the second record to node-2", "node-2", "node-3", "node-2")
	// node-2 passed again: only node-3's hold is out, so of the two
	// records a local consumer gets one and node-3's claim the other.
	c.one("t", -1)
	c.none("t", -1)
	if ds := c.claim(t, "t"); len(ds) != 1 {
		t.Fatalf("node-3's claim got %+v", ds)
	}
}

// internals.md §5.5: tokens are short-lived; an expired one is never
// notified.
func TestTokenExpires(t *testing.T) {
	c := newTokenCluster(t)
	tp := c.split("t", self)
	if err := c.svc.AcceptTokens("node-2", tokenFor("t", time.Second)); err != nil {
		t.Fatal(err)
	}
	c.clock.Advance(time.Second)
	if err := c.svc.AcceptTokens("node-3", tokenFor("t", 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	c.produce(tp, 0, `"a"`, `"b"`)
	c.wantNotified(t, "node-3 only", "node-3")
}

// internals.md §5.5: a routed consumer whose probes came back empty leaves
// a token with each live owner (TTL: its remaining wait + 250 ms, as a
// duration); a notification wakes it to claim the record from that owner.
func TestRoutedConsumerClaimsOnNotification(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	got := c.parkConsumer("t", 5*time.Second)
	eventually(t, 5*time.Second, "a registration at node-2", func() bool { return len(c.fwd.Registrations()) == 1 })
	r := c.fwd.Registrations()[0]
	if r.Node != "node-2" || r.From != self || len(r.Regs) != 1 || r.Regs[0].Topic != "t" ||
		r.Regs[0].TTL <= 4*time.Second || r.Regs[0].TTL > 5*time.Second+250*time.Millisecond {
		t.Fatalf("registration %+v", r)
	}
	c.wantClaimed(t, got, "node-2", remoteDelivery("t", 1, 4, 44))
	last := c.fwd.Consumes()[len(c.fwd.Consumes())-1]
	if last.Node != "node-2" || !last.Req.Claim || !last.Req.LocalOnly {
		t.Fatalf("claim %+v", last)
	}
}

// A notification that arrives while the pump is looking for a local record
// for the same consumer still finds it (it is not a pass): the consumer
// stays in its queue until the pump has a record to give it.
func TestNotificationWhileThePumpLooks(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	got := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		got <- ds
	}()
	eventually(t, 5*time.Second, "the token at node-2", func() bool { return len(c.fwd.Registrations()) == 1 })
	looking, release := make(chan struct{}), make(chan struct{})
	c.reader.holdNextBounds(func() { close(looking); <-release })
	if err := c.svc.AcceptTokens("node-3", tokenFor("t", time.Second)); err != nil { // wakes the pump
		t.Fatal(err)
	}
	<-looking // the pump is in its pass over partition 0 for the consumer
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 2, 22))
	claimed := c.svc.Notified("node-2", "t")
	close(release)
	if !claimed {
		t.Fatal("the notification passed while the consumer was parked")
	}
	if ds := <-got; len(ds) != 1 || ds[0].Record.Offset != 2 {
		t.Fatalf("consumer got %+v", ds)
	}
}

// internals.md §5.5: a notification no parked consumer can use is a pass.
func TestNotificationWithoutConsumerPasses(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	if c.svc.Notified("node-2", "t") {
		t.Fatal("claimed with nobody parked")
	}
}

// internals.md §5.5: consumers parking within 250 ms of a registration
// share it; once a notification spent it, the keeper leaves a new token
// for the consumers still parked.
func TestTokenSharedThenKeptAlive(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	consumer := func() {
		_, _ = c.svc.Consume(ctx, consume.Request{Topic: "t", Wait: 5 * time.Second, Identity: "u"})
		done <- struct{}{}
	}
	go consumer()
	eventually(t, 5*time.Second, "the first registration", func() bool { return len(c.fwd.Registrations()) == 1 })
	go consumer()
	eventually(t, 5*time.Second, "both consumers parked", func() bool { return c.svc.Parked() == 2 })
	if n := len(c.fwd.Registrations()); n != 1 {
		t.Fatalf("%d registrations for two consumers parking together", n)
	}
	c.fwd.Offer("node-2", remoteDelivery("t", 1, 0, 1))
	if !c.svc.Notified("node-2", "t") {
		t.Fatal("passed")
	}
	<-done // the first consumer claimed the record
	eventually(t, 5*time.Second, "a new token", func() bool { return len(c.fwd.Registrations()) >= 2 })
	if probes := c.probes(); probes != 1 { // the keeper's 500 ms comes well before the consumer's 2 s round
		t.Fatalf("%d probes: the second consumer probed, or the new token came from a consumer's round, not the keeper", probes)
	}
	cancel()
	<-done
}

// probes counts the plain probes the forwarder saw.
func (c *cluster) probes() int {
	n := 0
	for _, f := range c.fwd.Consumes() {
		if f.Req.LocalOnly && !f.Req.Claim {
			n++
		}
	}
	return n
}

// A notification whose claim finds nothing (the owner's estimate was
// wrong, or another consumer was faster) leaves that owner without a token
// for one polling round, so an owner that keeps notifying for records no
// claim gets cannot make notify, claim and register spin at network speed.
func TestEmptyClaimsDoNotSpin(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	// The keeper may still be inside a registration when the test ends: a
	// notification starts only while the test runs, so Wait never meets a
	// late Go.
	var (
		owner   sync.WaitGroup
		mu      sync.Mutex
		stopped bool
	)
	defer owner.Wait()
	defer func() {
		c.fwd.OnRegister(nil)
		mu.Lock()
		stopped = true
		mu.Unlock()
	}()
	c.fwd.OnRegister(func(r fake.TokenCall) { // notifies at once, for nothing
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			owner.Go(func() { c.svc.Notified(r.Node, "t") })
		}
	})
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: time.Second, Identity: "u"})
	if err != nil || len(ds) != 0 {
		t.Fatalf("got %+v %v", ds, err)
	}
	claims := 0
	for _, f := range c.fwd.Consumes() {
		if f.Req.Claim {
			claims++
		}
	}
	if claims == 0 || claims > 20 { // polling pauses of 100 ms doubling, plus the keeper's 500 ms
		t.Fatalf("%d empty claims in a 1 s wait", claims)
	}
}

// internals.md §5.5: an owner that refuses registrations (an older
// release) is polled instead, and not asked again for a while.
func TestRefusedTokensFallBackToPolling(t *testing.T) {
	c := newTokenCluster(t)
	c.split("t", self, "node-2")
	c.fwd.RefuseTokens(domain.ErrNotImplemented)
	ds, err := c.svc.Consume(context.Background(), consume.Request{Topic: "t", Wait: 600 * time.Millisecond, Identity: "u"})
	if err != nil || len(ds) != 0 {
		t.Fatalf("got %+v %v", ds, err)
	}
	if n := len(c.fwd.Registrations()); n != 1 {
		t.Fatalf("%d registrations; a refusing owner is polled, not asked again", n)
	}
	probes := 0
	for _, f := range c.fwd.Consumes() {
		if f.Req.LocalOnly && !f.Req.Claim {
			probes++
		}
	}
	if probes < 3 {
		t.Fatalf("%d probes in 600 ms; polling starts at 100 ms", probes)
	}
}

// bridge carries one node's forwards and tokens straight to another
// node's Service, as the node RPC would.
type bridge struct {
	mu     sync.Mutex
	nodes  map[string]*consume.Service
	claims []int // deliveries each claim returned, in order
	tokens int   // registrations the owners accepted
	pushes []int // deliveries each push carried, in order
}

var (
	_ ports.PeerForwarder = (*bridge)(nil)
	_ ports.TokenPeers    = (*bridge)(nil)
)

func (b *bridge) node(id string) *consume.Service {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nodes[id]
}

func (b *bridge) ConsumeRemote(ctx context.Context, node string, r ports.RemoteConsume) ([]domain.Delivery, error) {
	return b.consume(ctx, node, r, "", 0)
}

func (b *bridge) consume(ctx context.Context, node string, r ports.RemoteConsume, tokenFor string, ttl time.Duration) ([]domain.Delivery, error) {
	modes := [...]consume.Mode{ports.ConsumeQueue: consume.ModeQueue, ports.ConsumePinned: consume.ModePinned,
		ports.ConsumeBatch: consume.ModeBatch, ports.ConsumeReplay: consume.ModeReplay}
	ds, err := b.node(node).Owner().Consume(ctx, consume.Request{Topic: r.Topic, Mode: modes[r.Mode], Partition: r.Partition,
		Pinned: r.Pinned, Offset: r.Offset, Max: int(r.Max), Wait: r.Wait, Identity: "peer", LocalOnly: r.LocalOnly, Claim: r.Claim,
		TokenFor: tokenFor, TokenTTL: ttl})
	if r.Claim {
		b.mu.Lock()
		b.claims = append(b.claims, len(ds))
		b.mu.Unlock()
	}
	return ds, err
}

func (b *bridge) SettleRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op ports.SettleOp) ([]error, error) {
	ops := [...]consume.Op{ports.SettleAck: consume.OpAck, ports.SettleExtend: consume.OpExtend, ports.SettleNack: consume.OpNack}
	return b.node(node).Owner().AckBatch(ctx, topic, hs, ops[op])
}

func (b *bridge) NackRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, opts ports.NackOptions) ([]error, error) {
	return b.node(node).Owner().NackBatchWith(ctx, topic, hs, consume.NackOptions(opts))
}

func (b *bridge) RegisterTokens(_ context.Context, owner, from string, regs []ports.TokenRegistration) error {
	if err := b.node(owner).AcceptTokens(from, regs); err != nil {
		return err
	}
	b.mu.Lock()
	b.tokens++
	b.mu.Unlock()
	return nil
}

func (b *bridge) ProbeLeavingToken(ctx context.Context, owner, from string, r ports.RemoteConsume, ttl time.Duration) ([]domain.Delivery, bool, error) {
	r.LocalOnly, r.Wait = true, 0
	ds, err := b.consume(ctx, owner, r, from, ttl)
	left := err == nil && len(ds) == 0
	if left {
		b.mu.Lock()
		b.tokens++
		b.mu.Unlock()
	}
	return ds, left, err
}

func (b *bridge) NotifyToken(_ context.Context, node, from, topic string) (bool, error) {
	return b.node(node).Notified(from, topic), nil
}

func (b *bridge) PushToken(_ context.Context, node, from, topic string, ds []domain.Delivery) (bool, time.Duration, error) {
	b.mu.Lock()
	b.pushes = append(b.pushes, len(ds))
	b.mu.Unlock()
	taken, again := b.node(node).Pushed(from, topic, ds)
	return taken, again, nil
}

// internals.md §5.5, story F41: end to end over two nodes, a consumer
// parked on a gateway (it owns none of the topic) gets a record committed
// on the owner through its token, not by waiting for the next probe: the
// owner pushes the record it reserved (one round trip, no claim).
func TestTokensCarryARecordToAGateway(t *testing.T) {
	br := &bridge{nodes: map[string]*consume.Service{}}
	c := newCluster(t)
	c.peers, c.tokens = br, br
	_ = c.svc.Close()
	c.svc = c.newService(c.offsets)
	c.run()
	tp := c.split("t", self) // node-1 owns the only partition
	gw, err := consume.New(consume.Deps{
		Topics: c.meta, Cluster: c.meta, Logs: fake.NewPartitionLogs(), Offsets: fake.NewOffsets(), Clock: c.clock,
		Metrics: &fake.Metrics{}, SelfID: "node-2", Seeds: rand.Reader, Peers: br, Tokens: br,
	}, consume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); _ = gw.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-stopped; _ = gw.Close() })
	br.mu.Lock()
	br.nodes[self], br.nodes["node-2"] = c.svc, gw
	br.mu.Unlock()

	got := make(chan []domain.Delivery, 1)
	go func() {
		ds, _ := gw.Consume(context.Background(), consume.Request{Topic: "t", Wait: 10 * time.Second, Identity: "u"})
		got <- ds
	}()
	eventually(t, 5*time.Second, "the gateway's token at the owner", func() bool {
		br.mu.Lock()
		defer br.mu.Unlock()
		return br.tokens == 1
	})
	c.produce(tp, 0, `"x"`)
	ds := <-got
	if len(ds) != 1 || string(ds[0].Record.Payload) != `"x"` {
		t.Fatalf("gateway consumer got %+v", ds)
	}
	br.mu.Lock()
	claims, pushes := fmt.Sprint(br.claims), fmt.Sprint(br.pushes)
	br.mu.Unlock()
	if claims != "[]" || pushes != "[1]" {
		t.Fatalf("claims returned %s records, pushes carried %s; want the record carried by one push", claims, pushes)
	}
	if err := gw.Ack(context.Background(), "t", *ds[0].Handle); err != nil {
		t.Fatalf("ack through the gateway: %v", err)
	}
}

package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

func sampleDeliveries() []domain.Delivery {
	return []domain.Delivery{
		{Topic: "orders", Partition: 2, Record: domain.Record{Offset: 17, Key: []byte("k"), Payload: []byte(`{"a":1}`), CommittedAtMs: 1700000000123},
			Handle: &domain.ReceiptHandle{Partition: 2, Offset: 17, Nonce: 99}},
		{Topic: "orders", Partition: 0, Record: domain.Record{Offset: 3, Payload: []byte{0xff, 0}, CommittedAtMs: 5}},
	}
}

// ensure that a forwarded consume reaches the owner's use case with every
// field of the shared request (F11) and brings its deliveries back intact.
func TestConsumeForwardRoundTrip(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	o.service.deliveries = sampleDeliveries()
	p := callerFor(t, o)
	req := ports.RemoteConsume{Topic: "orders", Mode: ports.ConsumeBatch, Partition: 2, Pinned: true, Max: 10, Wait: 300 * time.Millisecond}

	ds, err := p.ConsumeRemote(context.Background(), "owner", req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ds, sampleDeliveries()) {
		t.Fatalf("deliveries %+v, want %+v", ds, sampleDeliveries())
	}
	got, _, _ := o.service.calls()
	want := consume.Request{Topic: "orders", Mode: consume.ModeBatch, Partition: 2, Pinned: true, Max: 10,
		Wait: 300 * time.Millisecond, Identity: forwardedIdentity}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("owner saw %+v, want %+v", got, want)
	}
}

// ensure that a secured consume keeps its user through the forward: the
// owner counts it against that user's cap, not the shared bucket of
// identity-less forwards (the stream proved the cluster secret).
func TestConsumeForwardKeepsIdentity(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	if _, err := p.ConsumeRemote(context.Background(), "owner", ports.RemoteConsume{Topic: "t", Identity: "alice"}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := o.service.calls()
	if len(got) != 1 || got[0].Identity != "alice" {
		t.Fatalf("owner saw %+v, want identity alice", got)
	}
	if _, _, err := decodeConsumeRequest(appendString(appendConsumeRequest(nil, ports.RemoteConsume{Topic: "t"}), strings.Repeat("u", 65))); err == nil {
		t.Fatal("an identity over 64 bytes was accepted")
	}
}

// ensure that a node without the cluster secret cannot forge an identity:
// its consume claiming to act for admin never reaches the owner's use case.
func TestForgedIdentityWithoutSecretRefused(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	c, _ := newClient(t, secretB)
	forger := NewPeers(c, staticResolver{"owner": o.srv.Addr().String()})
	_, err := forger.ConsumeRemote(context.Background(), "owner", ports.RemoteConsume{Topic: "t", Identity: "admin"})
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("forged consume: %v, want ErrAuth", err)
	}
	if got, _, _ := o.service.calls(); len(got) != 0 {
		t.Fatalf("the owner served a forged consume: %+v", got)
	}
}

// ensure that a probe with nothing to give answers an empty list, and that
// the owner's consume refusals come back as their domain errors.
func TestConsumeForwardRefusals(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	ds, err := p.ConsumeRemote(context.Background(), "owner", ports.RemoteConsume{Topic: "t", LocalOnly: true})
	if err != nil || len(ds) != 0 {
		t.Fatalf("empty probe = %v, %v", ds, err)
	}
	cases := []error{
		fmt.Errorf("consume: t/1: %w", domain.ErrNotOwner),
		domain.ErrTopicNotFound,
		domain.ErrOffsetNotWritten,
		domain.Refuse(domain.ErrTooManyConsumes, "too many in-flight consume requests for this identity (limit 1024 per node)"),
	}
	for _, ownerErr := range cases {
		o.service.mu.Lock()
		o.service.consumeErr = ownerErr
		o.service.mu.Unlock()
		_, err := p.ConsumeRemote(context.Background(), "owner", ports.RemoteConsume{Topic: "t", Mode: ports.ConsumePinned, Partition: 1})
		if !errors.Is(err, errors.Unwrap(ownerErr)) && !errors.Is(err, ownerErr) {
			t.Fatalf("owner %v came back as %v", ownerErr, err)
		}
		var want *domain.Refusal
		var got *domain.Refusal
		if errors.As(ownerErr, &want) && (!errors.As(err, &got) || got.Detail != want.Detail) {
			t.Fatalf("refusal detail lost: %v", err)
		}
	}
}

// ensure that single forwarded acks, extends and nacks reach the owner as
// their ops and answer per handle (internals.md §5.9).
func TestSettleSingleForwarding(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	gone := domain.ReceiptHandle{Partition: 1, Offset: 5, Nonce: 7}
	o.service.setSettleErr(map[domain.ReceiptHandle]error{gone: fmt.Errorf("consume: t/1: %w", domain.ErrLeaseGone)})
	p := callerFor(t, o)
	live := domain.ReceiptHandle{Partition: 1, Offset: 4, Nonce: 3}
	for op, want := range map[ports.SettleOp]consume.Op{ports.SettleAck: consume.OpAck, ports.SettleExtend: consume.OpExtend, ports.SettleNack: consume.OpNack} {
		errs, err := p.SettleRemote(context.Background(), "owner", "t", []domain.ReceiptHandle{live}, op)
		if err != nil || len(errs) != 1 || errs[0] != nil {
			t.Fatalf("op %d: %v, %v", op, errs, err)
		}
		_, settles, _ := o.service.calls()
		if last := settles[len(settles)-1]; last != (settleCall{"t", live, want}) {
			t.Fatalf("owner saw %+v for op %d", last, op)
		}
	}
	errs, err := p.SettleRemote(context.Background(), "owner", "t", []domain.ReceiptHandle{gone}, ports.SettleAck)
	if err != nil || len(errs) != 1 || !errors.Is(errs[0], domain.ErrLeaseGone) {
		t.Fatalf("lapsed handle: %v, %v", errs, err)
	}
	o.service.mu.Lock()
	o.service.topicErr = domain.ErrTopicNotFound
	o.service.mu.Unlock()
	if _, err := p.SettleRemote(context.Background(), "owner", "t", []domain.ReceiptHandle{live}, ports.SettleAck); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("absent topic: %v", err)
	}
}

// ensure that more than one handle goes as AckBatch calls of at most 64
// (in parallel, each on a slot of the window), answered per handle in
// order (internals.md §5.9).
func TestSettleBatchForwarding(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	hs := make([]domain.ReceiptHandle, 70)
	for i := range hs {
		hs[i] = domain.ReceiptHandle{Partition: int32(i % 3), Offset: int64(i), Nonce: uint64(i + 1)}
	}
	o.service.setSettleErr(map[domain.ReceiptHandle]error{hs[5]: domain.ErrLeaseGone, hs[66]: domain.ErrNotOwner})
	p := callerFor(t, o)
	errs, err := p.SettleRemote(context.Background(), "owner", "t", hs, ports.SettleExtend)
	if err != nil || len(errs) != len(hs) {
		t.Fatalf("SettleRemote = %d errs, %v", len(errs), err)
	}
	for i, e := range errs {
		switch i {
		case 5:
			if !errors.Is(e, domain.ErrLeaseGone) {
				t.Fatalf("handle 5: %v", e)
			}
		case 66:
			if !errors.Is(e, domain.ErrNotOwner) {
				t.Fatalf("handle 66: %v", e)
			}
		default:
			if e != nil {
				t.Fatalf("handle %d: %v", i, e)
			}
		}
	}
	_, _, batches := o.service.calls()
	sizes := []int{}
	for _, b := range batches {
		sizes = append(sizes, len(b.hs))
		if b.op != consume.OpExtend {
			t.Fatalf("owner saw batches %+v", batches)
		}
	}
	slices.Sort(sizes) // the two batches take two slots of the window and race
	if !reflect.DeepEqual(sizes, []int{6, 64}) {
		t.Fatalf("owner saw batches of %v handles, want 64 and 6", sizes)
	}
}

// ensure that an AckBatch mixing modes is applied in order, one use-case
// call per run of one mode, each item answered as its single op would be.
func TestAckBatchMixedModesAppliedInOrder(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	h := func(n uint64) domain.ReceiptHandle { return domain.ReceiptHandle{Offset: int64(n), Nonce: n} }
	o.service.setSettleErr(map[domain.ReceiptHandle]error{h(3): domain.ErrLeaseGone})
	items := []ackItem{{ports.SettleAck, h(1)}, {ports.SettleAck, h(2)}, {ports.SettleNack, h(3)}, {ports.SettleAck, h(4)}}
	body, err := p.call(context.Background(), "owner", OpAckBatch, appendAckBatch(nil, "t", items))
	if err != nil {
		t.Fatal(err)
	}
	errs, err := decodeItemReplies(body, "owner", OpAckBatch)
	if err != nil || len(errs) != 4 || errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], domain.ErrLeaseGone) || errs[3] != nil {
		t.Fatalf("outcomes %v, %v", errs, err)
	}
	_, _, batches := o.service.calls()
	ops := []consume.Op{}
	for _, b := range batches {
		ops = append(ops, b.op)
	}
	if !reflect.DeepEqual(ops, []consume.Op{consume.OpAck, consume.OpNack, consume.OpAck}) || len(batches[0].hs) != 2 {
		t.Fatalf("runs %+v", batches)
	}
}

// ensure that a settle or probe to a peer that is down fails as a whole
// with a transport error of the "not sent" class, never as an owner
// refusal: the owner surely did not act (api.md §2.15: 503, not 502).
func TestSettleToDownPeer(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	_ = o.srv.Close()
	hs := []domain.ReceiptHandle{{Offset: 1, Nonce: 1}, {Offset: 2, Nonce: 2}}
	_, err := p.SettleRemote(context.Background(), "owner", "t", hs, ports.SettleAck)
	if !errors.Is(err, domain.ErrNotSent) || errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("err = %v, want a transport error, not sent", err)
	}
	_, err = p.ConsumeRemote(context.Background(), "owner", ports.RemoteConsume{Topic: "t", LocalOnly: true})
	if !errors.Is(err, domain.ErrNotSent) || errors.Is(err, domain.ErrNoAnswer) {
		t.Fatalf("probe err = %v, want a transport error, not sent", err)
	}
}

package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
)

// ensure that a delayed nack (op 39) reaches the owner's use case with its
// topic, handles and delay, and each handle's outcome comes back in order.
func TestNackDelayedCrossesToTheOwner(t *testing.T) {
	t.Parallel()
	s := &fakeService{settleErr: map[domain.ReceiptHandle]error{}}
	gone := domain.ReceiptHandle{Partition: 2, Offset: 9, Nonce: 3}
	s.settleErr[gone] = domain.ErrLeaseGone
	p := ackCaller(t, ackOwner(t, s, false), nil)
	hs := []domain.ReceiptHandle{{Partition: 0, Offset: 1, Nonce: 7}, gone}
	errs, err := p.DeferRemote(context.Background(), "owner", "orders", hs, 1500*time.Millisecond)
	if err != nil || len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) {
		t.Fatalf("%v %v", errs, err)
	}
	_, _, batches := s.calls()
	want := settleBatch{topic: "orders", hs: hs, op: consume.OpNack, delay: 1500 * time.Millisecond}
	if len(batches) != 1 || !reflect.DeepEqual(batches[0], want) {
		t.Fatalf("owner got %+v", batches)
	}
}

// ensure that an owner on a release without op 39 answers every handle a
// precondition refusal, and that nothing was applied there.
func TestNackDelayedToAnOlderOwnerIsAPrecondition(t *testing.T) {
	t.Parallel()
	s := &fakeService{}
	p := ackCaller(t, ackOwner(t, s, true), nil)
	hs := []domain.ReceiptHandle{{Partition: 0, Offset: 1, Nonce: 7}, {Partition: 1, Offset: 2, Nonce: 8}}
	errs, err := p.DeferRemote(context.Background(), "owner", "orders", hs, time.Second)
	if err != nil || len(errs) != 2 {
		t.Fatalf("%v %v", errs, err)
	}
	for i, e := range errs {
		var r *domain.Refusal
		if !errors.Is(e, domain.ErrPrecondition) || !errors.As(e, &r) || r.Detail != nackOlderOwnerMessage {
			t.Fatalf("handle %d: %v", i, e)
		}
	}
	if _, settles, batches := s.calls(); len(settles)+len(batches) != 0 {
		t.Fatalf("an older owner applied %v %v", settles, batches)
	}
}

// FuzzNackDelayedRequest ensures that the op 39 decoder never panics,
// refuses only with ErrBadPayload, never accepts a negative delay or more
// items than the cap, and that what it accepts re-encodes to the bytes it
// read.
func FuzzNackDelayedRequest(f *testing.F) {
	f.Add(appendNackDelayed(nil, "orders", time.Minute, []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}))
	f.Add(appendNackDelayed(nil, "t", 0, nil))
	f.Add(appendI64(appendString(nil, "t"), -1))
	f.Fuzz(func(t *testing.T, data []byte) {
		topic, delay, hs, err := decodeNackDelayed(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if delay < 0 || len(hs) > ackBatchItemsMaxCount {
			t.Fatalf("accepted delay %v, %d items", delay, len(hs))
		}
		if again := appendNackDelayed(nil, topic, delay, hs); !reflect.DeepEqual(again, data) {
			t.Fatalf("re-encodes as % x, read % x", again, data)
		}
	})
}

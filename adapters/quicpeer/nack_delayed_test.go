package quicpeer

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/ports"
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
	errs, err := p.NackRemote(context.Background(), "owner", "orders", hs, ports.NackOptions{Delay: 1500 * time.Millisecond})
	if err != nil || len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], domain.ErrLeaseGone) {
		t.Fatalf("%v %v", errs, err)
	}
	_, _, batches := s.calls()
	want := settleBatch{topic: "orders", hs: hs, op: consume.OpNack, nack: consume.NackOptions{Delay: 1500 * time.Millisecond}}
	if len(batches) != 1 || !reflect.DeepEqual(batches[0], want) {
		t.Fatalf("owner got %+v", batches)
	}
}

// ensure that a nack's reason crosses to the owner over op 39, with a
// delay and without one, at its largest too.
func TestNackReasonCrossesToTheOwner(t *testing.T) {
	t.Parallel()
	s := &fakeService{}
	p := ackCaller(t, ackOwner(t, s, false), nil)
	hs := []domain.ReceiptHandle{{Partition: 0, Offset: 1, Nonce: 7}}
	sent := []ports.NackOptions{
		{Reason: "parse error: unexpected ű"},
		{Delay: time.Second, Reason: strings.Repeat("r", deadletter.ReasonBytesMax)},
	}
	for _, o := range sent {
		if errs, err := p.NackRemote(context.Background(), "owner", "orders", hs, o); err != nil || len(errs) != 1 || errs[0] != nil {
			t.Fatalf("%v %v", errs, err)
		}
	}
	_, _, batches := s.calls()
	if len(batches) != len(sent) {
		t.Fatalf("owner got %d batches", len(batches))
	}
	for i, o := range sent {
		if got := batches[i].nack; got != consume.NackOptions(o) {
			t.Fatalf("batch %d: owner got %+v, want %+v", i, got, o)
		}
	}
}

// ensure that an owner on a release without op 39 answers every handle a
// precondition refusal, and that nothing was applied there.
func TestNackDelayedToAnOlderOwnerIsAPrecondition(t *testing.T) {
	t.Parallel()
	s := &fakeService{}
	p := ackCaller(t, ackOwner(t, s, true), nil)
	hs := []domain.ReceiptHandle{{Partition: 0, Offset: 1, Nonce: 7}, {Partition: 1, Offset: 2, Nonce: 8}}
	for _, o := range []ports.NackOptions{{Delay: time.Second}, {Reason: "why"}} {
		errs, err := p.NackRemote(context.Background(), "owner", "orders", hs, o)
		if err != nil || len(errs) != 2 {
			t.Fatalf("%v %v", errs, err)
		}
		for i, e := range errs {
			var r *domain.Refusal
			if !errors.Is(e, domain.ErrPrecondition) || !errors.As(e, &r) || r.Detail != nackOlderOwnerMessage {
				t.Fatalf("handle %d: %v", i, e)
			}
		}
	}
	if _, settles, batches := s.calls(); len(settles)+len(batches) != 0 {
		t.Fatalf("an older owner applied %v %v", settles, batches)
	}
}

// ensure that a nack without a reason encodes exactly as op 39's first
// form, that a reason is one trailing field (uvarint length + bytes), and
// that the decoder refuses a reason that is empty, too long, not UTF-8 or
// has a non-minimal length.
func TestNackDelayedReasonCodec(t *testing.T) {
	t.Parallel()
	hs := []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}
	plain := appendI64(appendString(nil, "orders"), 1500)
	plain = appendHandle(appendU32(plain, 1), hs[0])
	if got := appendNackDelayed(nil, "orders", ports.NackOptions{Delay: 1500 * time.Millisecond}, hs); !bytes.Equal(got, plain) {
		t.Fatalf("without a reason % x, want the first form % x", got, plain)
	}
	withReason := appendNackDelayed(nil, "orders", ports.NackOptions{Delay: 1500 * time.Millisecond, Reason: "bad"}, hs)
	if want := append(append([]byte(nil), plain...), 3, 'b', 'a', 'd'); !bytes.Equal(withReason, want) {
		t.Fatalf("with a reason % x, want % x", withReason, want)
	}
	topic, o, got, err := decodeNackDelayed(withReason)
	if err != nil || topic != "orders" || o.Delay != 1500*time.Millisecond || o.Reason != "bad" || !reflect.DeepEqual(got, hs) {
		t.Fatalf("decoded %q %+v %v %v", topic, o, got, err)
	}
	long := appendNackDelayed(nil, "t", ports.NackOptions{Reason: strings.Repeat("x", deadletter.ReasonBytesMax)}, nil)
	if _, o, _, err := decodeNackDelayed(long); err != nil || len(o.Reason) != deadletter.ReasonBytesMax {
		t.Fatalf("the longest reason: %d bytes, %v", len(o.Reason), err)
	}
	bad := map[string][]byte{
		"empty":       append(append([]byte(nil), plain...), 0),
		"too long":    appendNackDelayed(nil, "orders", ports.NackOptions{Reason: strings.Repeat("x", deadletter.ReasonBytesMax+1)}, hs),
		"not UTF-8":   append(append([]byte(nil), plain...), 2, 0xff, 0xfe),
		"non-minimal": append(append([]byte(nil), plain...), 0x81, 0x00, 'x'),
		"truncated":   append(append([]byte(nil), plain...), 5, 'a'),
		"bad uvarint": append(append([]byte(nil), plain...), 0x80),
	}
	for name, p := range bad {
		if _, _, _, err := decodeNackDelayed(p); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v, want ErrBadPayload", name, err)
		}
	}
}

// FuzzNackDelayedRequest ensures that the op 39 decoder never panics,
// refuses only with ErrBadPayload, never accepts a negative delay, more
// items than the cap or a reason that is empty-but-sent, too long or not
// UTF-8, and that what it accepts re-encodes to the bytes it read.
func FuzzNackDelayedRequest(f *testing.F) {
	h := []domain.ReceiptHandle{{Partition: 1, Offset: 2, Nonce: 3}}
	f.Add(appendNackDelayed(nil, "orders", ports.NackOptions{Delay: time.Minute}, h))
	f.Add(appendNackDelayed(nil, "t", ports.NackOptions{}, nil))
	f.Add(appendNackDelayed(nil, "orders", ports.NackOptions{Reason: "poison"}, h))
	f.Add(appendNackDelayed(nil, "t", ports.NackOptions{Delay: time.Second, Reason: strings.Repeat("é", 300)}, nil))
	f.Add(appendI64(appendString(nil, "t"), -1))
	f.Fuzz(func(t *testing.T, data []byte) {
		topic, o, hs, err := decodeNackDelayed(data)
		if err != nil {
			if !errors.Is(err, ErrBadPayload) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if o.Delay < 0 || len(hs) > ackBatchItemsMaxCount || len(o.Reason) > deadletter.ReasonBytesMax || !utf8.ValidString(o.Reason) {
			t.Fatalf("accepted delay %v, %d items, reason of %d bytes", o.Delay, len(hs), len(o.Reason))
		}
		if again := appendNackDelayed(nil, topic, o, hs); !reflect.DeepEqual(again, data) {
			t.Fatalf("re-encodes as % x, read % x", again, data)
		}
	})
}

package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/domain"
)

func pushedDelivery(topic string, off int64, key, payload string) domain.Delivery {
	return domain.Delivery{Topic: topic, Partition: 2, Record: domain.Record{Offset: off, CommittedAtMs: 1_700_000_000_000, Key: []byte(key), Payload: []byte(payload)},
		Handle: &domain.ReceiptHandle{Partition: 2, Offset: off, Nonce: 99}}
}

// ensure that a push carries its caller, topic and deliveries (handle
// included) to the node, and that its answer, taken or pass, comes back
// (internals.md §5.5 "A notification carries its record", op 41).
func TestTokenPushRoundTrip(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	tk := &fakeTokens{}
	RegisterTokens(o.srv, tk)
	p := callerFor(t, o)
	ds := []domain.Delivery{pushedDelivery("a", 7, "key", `{"n":1}`)}
	for _, take := range []bool{true, false} {
		tk.mu.Lock()
		tk.claim = take
		tk.mu.Unlock()
		taken, err := p.PushToken(context.Background(), "owner", "node-7", "a", ds)
		if err != nil || taken != take {
			t.Fatalf("push answered %v, %v; want %v", taken, err, take)
		}
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if !reflect.DeepEqual(tk.notified, []string{"node-7/a", "node-7/a"}) || len(tk.pushed) != 2 || !reflect.DeepEqual(tk.pushed[0], ds) {
		t.Fatalf("node got %v %+v", tk.notified, tk.pushed)
	}
}

// ensure that a node predating pushes answers domain.ErrNotImplemented,
// the owner's signal to notify it instead, and that an empty push is
// refused before it is sent.
func TestTokenPushOnAnOlderNode(t *testing.T) {
	t.Parallel()
	o := startOwner(t) // no token handlers registered
	p := callerFor(t, o)
	ds := []domain.Delivery{pushedDelivery("a", 7, "", "x")}
	if _, err := p.PushToken(context.Background(), "owner", "node-7", "a", ds); !errors.Is(err, domain.ErrNotImplemented) || isTransport(err) {
		t.Fatalf("push to an older node: %v", err)
	}
	if _, err := p.PushToken(context.Background(), "owner", "node-7", "a", nil); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("empty push: %v", err)
	}
}

// ensure that a decoded push owns its bytes: the frame buffer it came in
// is reused once the handler returns, while the record waits for a
// consumer's reply.
func TestTokenPushDecodesCopies(t *testing.T) {
	frame := appendTokenPush(nil, "node-2", "t", []domain.Delivery{pushedDelivery("t", 1, "key", "payload")})
	_, _, ds, err := decodeTokenPush(frame)
	if err != nil {
		t.Fatal(err)
	}
	clear(frame)
	if string(ds[0].Record.Key) != "key" || string(ds[0].Record.Payload) != "payload" {
		t.Fatalf("the delivery changed with its frame: %q %q", ds[0].Record.Key, ds[0].Record.Payload)
	}
	unleased := pushedDelivery("t", 1, "", "x")
	unleased.Handle = nil
	for name, bad := range map[string][]byte{
		"another topic's record": appendTokenPush(nil, "node-2", "t", []domain.Delivery{pushedDelivery("u", 1, "", "x")}),
		"a record without lease": appendTokenPush(nil, "node-2", "t", []domain.Delivery{unleased}),
		"trailing bytes":         append(appendTokenPush(nil, "node-2", "t", []domain.Delivery{pushedDelivery("t", 1, "", "x")}), 0),
		"truncated":              frame[:5],
	} {
		if _, _, _, err := decodeTokenPush(bad); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fuzzTokenPush checks one fuzz input against the push decoder: it never
// panics, refuses only with ErrBadPayload, and what it accepts re-encodes
// to the same.
func fuzzTokenPush(t *testing.T, data []byte) {
	from, topic, ds, err := decodeTokenPush(data)
	if err != nil {
		if !errors.Is(err, ErrBadPayload) {
			t.Fatalf("unclassified push error: %v", err)
		}
		return
	}
	f2, t2, d2, err := decodeTokenPush(appendTokenPush(nil, from, topic, ds))
	if err != nil || f2 != from || t2 != topic || !reflect.DeepEqual(d2, ds) {
		t.Fatalf("push re-encoded as %q %q %+v, %v", f2, t2, d2, err)
	}
}

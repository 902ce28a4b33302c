package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

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
	for _, tc := range []struct {
		take  bool
		again time.Duration
	}{{true, 0}, {true, 5250 * time.Millisecond}, {false, 0}} {
		tk.mu.Lock()
		tk.claim, tk.again = tc.take, tc.again
		tk.mu.Unlock()
		taken, again, err := p.PushToken(context.Background(), "owner", "node-7", "a", ds)
		if err != nil || taken != tc.take || again != tc.again {
			t.Fatalf("push answered %v, %v, %v; want %+v", taken, again, err, tc)
		}
	}
	tk.mu.Lock()
	defer tk.mu.Unlock()
	if !reflect.DeepEqual(tk.notified, []string{"node-7/a", "node-7/a", "node-7/a"}) || len(tk.pushed) != 3 || !reflect.DeepEqual(tk.pushed[0], ds) {
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
	if _, _, err := p.PushToken(context.Background(), "owner", "node-7", "a", ds); !errors.Is(err, domain.ErrNotImplemented) || isTransport(err) {
		t.Fatalf("push to an older node: %v", err)
	}
	if _, _, err := p.PushToken(context.Background(), "owner", "node-7", "a", nil); !errors.Is(err, domain.ErrInvalidArgument) {
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

// ensure that a push reply asks for the token again only with a taken
// push and a TTL within 1 ms..1 h, and that one without the field is read
// as not asking.
func TestPushReplyCodec(t *testing.T) {
	for _, tc := range []struct {
		taken bool
		again time.Duration
		bytes int
	}{{false, 0, 1}, {true, 0, 1}, {true, 2 * time.Second, 5}, {false, time.Second, 1}} {
		b := appendPushReply(nil, tc.taken, tc.again)
		taken, again, err := decodePushReply(b)
		want := tc.again
		if !tc.taken {
			want = 0
		}
		if len(b) != tc.bytes || err != nil || taken != tc.taken || again != want {
			t.Fatalf("%+v: %d bytes read as %v %v %v", tc, len(b), taken, again, err)
		}
	}
	for name, bad := range map[string][]byte{
		"a pass asking again": appendU32(appendBool(nil, false), 1000),
		"zero ttl":            appendU32(appendBool(nil, true), 0),
		"over an hour":        appendU32(appendBool(nil, true), tokenTTLMaxMs+1),
		"truncated ttl":       append(appendBool(nil, true), 0, 1),
	} {
		if _, _, err := decodePushReply(bad); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// fuzzTokenPush checks one fuzz input against the push decoder: it never
// panics, refuses only with ErrBadPayload, and what it accepts re-encodes
// to the same.
func fuzzTokenPush(t *testing.T, data []byte) {
	if taken, again, err := decodePushReply(data); err == nil {
		if t2, a2, err := decodePushReply(appendPushReply(nil, taken, again)); err != nil || t2 != taken || a2 != again {
			t.Fatalf("push reply re-encoded as %v %v, %v", t2, a2, err)
		}
	} else if !errors.Is(err, ErrBadPayload) {
		t.Fatalf("unclassified push reply error: %v", err)
	}
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

package quicpeer

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that a probe's token reaches the owner's use case with its node
// and TTL, that the probe goes local-only without a wait whatever the
// caller set, and that only an empty answer reports the token left
// (internals.md §5.5).
func TestProbeLeavingTokenReachesTheOwner(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	p := callerFor(t, o)
	req := ports.RemoteConsume{Topic: "t", Wait: time.Second, Identity: "alice"}
	ds, left, err := p.ProbeLeavingToken(context.Background(), "owner", "node-7", req, 2250*time.Millisecond)
	if err != nil || len(ds) != 0 || !left {
		t.Fatalf("empty probe: %+v left %v err %v", ds, left, err)
	}
	got, _, _ := o.service.calls()
	if len(got) != 1 || !got[0].LocalOnly || got[0].Wait != 0 || got[0].Identity != "alice" ||
		got[0].TokenFor != "node-7" || got[0].TokenTTL != 2250*time.Millisecond {
		t.Fatalf("owner saw %+v", got)
	}

	o.service.mu.Lock()
	o.service.deliveries = []domain.Delivery{{Topic: "t", Record: domain.Record{Offset: 4, Payload: []byte("x")}}}
	o.service.mu.Unlock()
	ds, left, err = p.ProbeLeavingToken(context.Background(), "owner", "node-7", req, time.Second)
	if err != nil || len(ds) != 1 || left {
		t.Fatalf("probe with a record: %+v left %v err %v", ds, left, err)
	}
}

// ensure that an owner that cannot read the token (an older release: its
// decoder refuses the trailing bytes) is probed again without it at once,
// the caller told no token was left, and probed without one afterwards.
func TestProbeTokenFallsBackForAnOlderOwner(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	var withToken, plain atomic.Int32
	srv.Handle(OpConsume, func(_ context.Context, p []byte) ([]byte, error) {
		req, tok, err := decodeConsumeRequest(p)
		switch {
		case err != nil:
			return errReply(err), nil
		case tok.ttl > 0: // what an older decoder answers: trailing bytes
			withToken.Add(1)
			return errReply(fmt.Errorf("decode consume: trailing bytes: %w", ErrBadPayload)), nil
		case !req.LocalOnly:
			return errReply(domain.ErrInvalidArgument), nil
		}
		plain.Add(1)
		return okReply(appendDeliveries(nil, nil)), nil
	})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"old": srv.Addr().String()})
	for i := range 2 {
		ds, left, err := p.ProbeLeavingToken(context.Background(), "old", "node-7", ports.RemoteConsume{Topic: "t"}, time.Second)
		if err != nil || len(ds) != 0 || left {
			t.Fatalf("probe %d: %+v left %v err %v", i, ds, left, err)
		}
	}
	if w, pl := withToken.Load(), plain.Load(); w != 1 || pl != 2 {
		t.Fatalf("%d probes with a token and %d without; want 1 and 2", w, pl)
	}
}

// ensure that the token travels after the identity, an empty one when the
// request acts for nobody, and that a request without a token is encoded
// exactly as before (older owners read it).
func TestConsumeTokenCodec(t *testing.T) {
	t.Parallel()
	for _, identity := range []string{"", "alice"} {
		req := ports.RemoteConsume{Topic: "t", LocalOnly: true, Identity: identity}
		got, tok, err := decodeConsumeRequest(appendConsumeWith(nil, req, consumeToken{from: "node-2", ttl: 1500 * time.Millisecond}))
		if err != nil || got != req || tok != (consumeToken{from: "node-2", ttl: 1500 * time.Millisecond}) {
			t.Fatalf("identity %q: %+v %+v %v", identity, got, tok, err)
		}
	}
	plain := ports.RemoteConsume{Topic: "t", LocalOnly: true}
	if a, b := appendConsumeWith(nil, plain, consumeToken{}), appendConsumeRequest(nil, plain); !bytes.Equal(a, b) {
		t.Fatal("a request without a token is encoded differently")
	}
	if _, tok, err := decodeConsumeRequest(appendConsumeRequest(nil, plain)); err != nil || tok != (consumeToken{}) {
		t.Fatalf("a request without a token decoded a token %+v (%v)", tok, err)
	}
	base := appendString(appendConsumeRequest(nil, plain), "")
	for name, tail := range map[string][]byte{
		"no node":   appendU32(appendString(nil, ""), 1000),
		"zero ttl":  appendU32(appendString(nil, "n"), 0),
		"ttl > 1 h": appendU32(appendString(nil, "n"), tokenTTLMaxMs+1),
		"truncated": appendString(nil, "n"),
	} {
		if _, _, err := decodeConsumeRequest(append(bytes.Clone(base), tail...)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

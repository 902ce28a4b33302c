package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// fakeTokens records what the token handlers pass on.
type fakeTokens struct {
	mu        sync.Mutex
	from      []string
	regs      [][]ports.TokenRegistration
	notified  []string // from/topic
	claim     bool
	acceptErr error
	pushed    [][]domain.Delivery
	again     time.Duration // a taken push asks its token again this long
}

func (f *fakeTokens) AcceptTokens(from string, regs []ports.TokenRegistration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.from = append(f.from, from)
	f.regs = append(f.regs, regs)
	return f.acceptErr
}

// seen returns what the handlers passed on so far.
func (f *fakeTokens) seen() ([]string, [][]ports.TokenRegistration, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.from...), append([][]ports.TokenRegistration(nil), f.regs...), append([]string(nil), f.notified...)
}

func (f *fakeTokens) Pushed(from, topic string, ds []domain.Delivery) (bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notified = append(f.notified, from+"/"+topic)
	f.pushed = append(f.pushed, ds)
	if !f.claim {
		return false, 0
	}
	return true, f.again
}

func (f *fakeTokens) Notified(from, topic string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notified = append(f.notified, from+"/"+topic)
	return f.claim
}

// ensure that a registration reaches the owner with its caller and every
// token (TTL as a duration), and that a notification's answer, claimed or
// pass, comes back (internals.md §5.5, ops 30 and 31).
func TestTokenOpsRoundTrip(t *testing.T) {
	t.Parallel()
	o := startOwner(t)
	tk := &fakeTokens{claim: true}
	RegisterTokens(o.srv, tk)
	p := callerFor(t, o)
	regs := []ports.TokenRegistration{{Topic: "a", TTL: 5250 * time.Millisecond}, {Topic: "b", TTL: time.Second}}
	if err := p.RegisterTokens(context.Background(), "owner", "node-7", regs); err != nil {
		t.Fatal(err)
	}
	if from, got, _ := tk.seen(); len(from) != 1 || from[0] != "node-7" || !reflect.DeepEqual(got[0], regs) {
		t.Fatalf("owner got %v %+v", from, got)
	}
	for _, claim := range []bool{true, false} {
		tk.mu.Lock()
		tk.claim = claim
		tk.mu.Unlock()
		got, err := p.NotifyToken(context.Background(), "owner", "node-7", "a")
		if err != nil || got != claim {
			t.Fatalf("notify answered %v, %v; want %v", got, err, claim)
		}
	}
	if _, _, notified := tk.seen(); !reflect.DeepEqual(notified, []string{"node-7/a", "node-7/a"}) {
		t.Fatalf("notified %v", notified)
	}
	tk.mu.Lock()
	tk.acceptErr = domain.Refuse(domain.ErrInvalidArgument, "no")
	tk.mu.Unlock()
	if err := p.RegisterTokens(context.Background(), "owner", "node-7", regs); !errors.Is(err, domain.ErrInvalidArgument) || isTransport(err) {
		t.Fatalf("refused registration: %v", err)
	}
}

// ensure that a node predating the token ops answers
// domain.ErrNotImplemented, the signal to poll it instead (§5.5, §10.3).
func TestTokenOpsOnAnOlderNode(t *testing.T) {
	t.Parallel()
	o := startOwner(t) // no token handlers registered
	p := callerFor(t, o)
	err := p.RegisterTokens(context.Background(), "owner", "node-7", []ports.TokenRegistration{{Topic: "a", TTL: time.Second}})
	if !errors.Is(err, domain.ErrNotImplemented) || isTransport(err) {
		t.Fatalf("register on an older node: %v", err)
	}
	if _, err := p.NotifyToken(context.Background(), "owner", "node-7", "a"); !errors.Is(err, domain.ErrNotImplemented) {
		t.Fatalf("notify on an older node: %v", err)
	}
}

// FuzzTokenPayloads ensures that the token decoders never panic, refuse
// only with ErrBadPayload, keep TTLs positive and within the cap, and that
// what they accept re-encodes to the same.
func FuzzTokenPayloads(f *testing.F) {
	f.Add(appendTokenRegister(nil, "node-2", []ports.TokenRegistration{{Topic: "t", TTL: 5 * time.Second}}))
	f.Add(appendTokenNotify(nil, "node-2", "t"))
	f.Add(appendBool(nil, true))
	f.Add(appendTokenPush(nil, "node-2", "t", []domain.Delivery{pushedDelivery("t", 3, "k", "v")}))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzTokenPush(t, data)
		from, regs, err := decodeTokenRegister(data)
		if err == nil {
			for _, r := range regs {
				if r.TTL <= 0 || r.TTL > time.Hour {
					t.Fatalf("ttl %v accepted", r.TTL)
				}
			}
			f2, r2, err := decodeTokenRegister(appendTokenRegister(nil, from, regs))
			if err != nil || f2 != from || !reflect.DeepEqual(r2, regs) {
				t.Fatalf("register re-encoded as %q %+v, %v", f2, r2, err)
			}
		} else if !errors.Is(err, ErrBadPayload) {
			t.Fatalf("unclassified register error: %v", err)
		}
		from, topic, err := decodeTokenNotify(data)
		if err == nil {
			if f2, t2, err := decodeTokenNotify(appendTokenNotify(nil, from, topic)); err != nil || f2 != from || t2 != topic {
				t.Fatalf("notify re-encoded as %q %q, %v", f2, t2, err)
			}
		} else if !errors.Is(err, ErrBadPayload) {
			t.Fatalf("unclassified notify error: %v", err)
		}
		if _, err := decodeNotifyReply(data); err != nil && !errors.Is(err, ErrBadPayload) {
			t.Fatalf("unclassified reply error: %v", err)
		}
	})
}

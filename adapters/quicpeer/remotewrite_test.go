package quicpeer

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// leaderFake records what it was handed and answers applied at index 7
// with result, or err.
type leaderFake struct {
	mu     sync.Mutex
	got    []ports.RemoteWrite
	result meta.Result
	err    error
}

func (l *leaderFake) LeaderWrite(_ context.Context, w ports.RemoteWrite) (ports.MetaApplied, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, w)
	return ports.MetaApplied{Index: 7, Result: l.result}, l.err
}

// first is the first write handed over. The server's goroutine wrote it,
// and a reply over a socket is no happens-before edge, so it reads under
// the lock.
func (l *leaderFake) first() ports.RemoteWrite {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got[0]
}

func (l *leaderFake) refuseWith(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
}

var pauseEntry = meta.Envelope{Actor: "root", AtMs: 1_700_000_000_000,
	Event: &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: "00000000000000b1", Op: meta.RemoteOpPause, Reason: "maintenance"}}

// ensure that a remote write crosses to the leader intact (op 35): the
// sub-operation, actor, request id and entry arrive as sent; the applied
// index and result come back; the leader's refusal comes back as its
// domain error; a node without op 35 is an older release.
func TestRemoteWriteCrossesToTheLeader(t *testing.T) {
	t.Parallel()
	l := &leaderFake{result: meta.Result{Code: meta.CodeConflict, Detail: "changed"}}
	srv, _ := newServer(t, ServerOptions{})
	RegisterRemoteWrite(srv, l)
	old, _ := newServer(t, ServerOptions{})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"leader": srv.Addr().String(), "old": old.Addr().String()})
	w := ports.RemoteWrite{Op: ports.AuditRemoteChildPause, Actor: "root", RequestID: "0123456789abcdef", Envelope: pauseEntry}
	applied, err := p.RemoteWrite(context.Background(), "leader", w)
	if err != nil || applied.Index != 7 || applied.Result != l.result {
		t.Fatalf("%+v %v", applied, err)
	}
	got := l.first()
	sent, _ := meta.Encode(pauseEntry)
	back, _ := meta.Encode(got.Envelope)
	if got.Op != w.Op || got.Actor != "root" || got.RequestID != w.RequestID || string(sent) != string(back) {
		t.Fatalf("handed %+v", got)
	}
	l.refuseWith(domain.Refuse(domain.ErrPrecondition, "member n3 applies through type 22"))
	if _, err := p.RemoteWrite(context.Background(), "leader", w); !errors.Is(err, domain.ErrPrecondition) {
		t.Fatalf("the leader's gate: %v", err)
	}
	if _, err := p.RemoteWrite(context.Background(), "old", w); !errors.Is(err, domain.ErrOlderRelease) {
		t.Fatalf("a node without op 35: %v", err)
	}
}

// A request whose entry is not of a remote type, or does not decode, is
// refused before the leader sees it.
func TestRemoteWriteRefusesOtherEntries(t *testing.T) {
	topic, _ := meta.Encode(meta.Envelope{Event: &meta.DeleteTopic{Name: "orders"}})
	remote, _ := meta.Encode(pauseEntry)
	for name, req := range map[string]remoteWriteRequest{
		"topic entry": {Op: "remote.delete", Entry: topic},
		"garbage":     {Op: "remote.delete", Entry: []byte{1, 2, 3}},
		"no op":       {Entry: remote},
	} {
		b, _ := json.Marshal(req)
		if _, err := decodeRemoteWriteRequest(b); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzRemoteWriteRequest: never a panic, and a decoded request always
// holds a remote entry.
func FuzzRemoteWriteRequest(f *testing.F) {
	remote, _ := meta.Encode(pauseEntry)
	b, _ := json.Marshal(remoteWriteRequest{Op: "remote_child.pause", Actor: "root", RequestID: "0123456789abcdef", Entry: remote})
	f.Add(b)
	f.Add([]byte(`{"op":"x","entry":"AQI="}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := decodeRemoteWriteRequest(b)
		if err == nil && (w.Envelope.Event == nil || !meta.IsRemoteType(w.Envelope.Event.Type()) || w.Op == "") {
			t.Fatalf("decoded %+v", w)
		}
	})
}

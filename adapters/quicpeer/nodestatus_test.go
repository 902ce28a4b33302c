package quicpeer

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

type fixedStatus struct {
	st  ports.NodeStatus
	err error
}

func (f fixedStatus) NodeStatus(context.Context) (ports.NodeStatus, error) { return f.st, f.err }

// Ensure that NodeStatus (op 33) carries a node's report across two nodes
// intact, and that the node's refusal comes back as its sentinel.
func TestNodeStatusRoundTrip(t *testing.T) {
	want := ports.NodeStatus{Node: "n2", Draining: true, ProduceInFlight: 3, DispatchBacklog: 41,
		Quarantine: ports.QuarantineInventory{Copies: 2, Bytes: 9000, List: []string{"a.stale-0000000000000001", "b.stale-0000000000000002"}},
		Moves: []ports.MoveReport{{Topic: "orders", Partition: 4, Source: "n1", Target: "n2", StartedAt: time.Unix(1_700_000_000, 0).UTC(),
			Phase: "frozen", Attempts: 2, LastError: "freeze lapsed", CopiedBytes: 1 << 20}}}
	srv, _ := newServer(t, ServerOptions{})
	RegisterNodeStatus(srv, fixedStatus{st: want})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"n2": srv.Addr().String()})
	got, err := p.NodeStatus(context.Background(), "n2")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v\nwant %+v", got, err, want)
	}

	down, _ := newServer(t, ServerOptions{})
	RegisterNodeStatus(down, fixedStatus{err: domain.Refuse(domain.ErrUnavailable, "disk gone")})
	p = NewPeers(c, staticResolver{"n3": down.Addr().String()})
	if _, err := p.NodeStatus(context.Background(), "n3"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("refusal: %v", err)
	}
}

// Ensure that a reply body out of range, with unknown fields or with data
// after the object is refused.
func TestNodeStatusDecodeRefusesBadBodies(t *testing.T) {
	for _, body := range []string{
		`{}`,
		`{"node":"n1","draining":false,"produce_in_flight":-1,"dispatch_backlog":0,"quarantine":{"copies":0,"bytes":0,"list":[]},"moves":[]}`,
		`{"node":"n1","draining":false,"produce_in_flight":0,"dispatch_backlog":0,"quarantine":{"copies":0,"bytes":0,"list":["x"]},"moves":[]}`,
		`{"node":"n1","extra":1}`,
		`{"node":"n1"} {}`,
	} {
		if _, err := decodeNodeStatus([]byte(body)); !errors.Is(err, ErrBadPayload) {
			t.Errorf("%s: %v", body, err)
		}
	}
	ok := encodeNodeStatus(ports.NodeStatus{Node: "n1"})
	if _, err := decodeNodeStatus(ok); err != nil {
		t.Fatalf("an encoded status does not decode: %s: %v", ok, err)
	}
}

// FuzzDecodeNodeStatus feeds arbitrary reply bodies to the decoder: it
// must never panic, and whatever it accepts must encode and decode again
// to the same status.
func FuzzDecodeNodeStatus(f *testing.F) {
	f.Add(encodeNodeStatus(ports.NodeStatus{Node: "n1", DispatchBacklog: 3, Quarantine: ports.QuarantineInventory{Copies: 1, List: []string{"q"}}}))
	f.Add([]byte(`{"node":"n1"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		st, err := decodeNodeStatus(body)
		if err != nil {
			return
		}
		again, err := decodeNodeStatus(encodeNodeStatus(st))
		if err != nil {
			t.Fatalf("re-decode of %+v: %v", st, err)
		}
		if st.Quarantine.List == nil {
			st.Quarantine.List = []string{}
		}
		if !reflect.DeepEqual(again, st) {
			t.Fatalf("%+v became %+v", st, again)
		}
	})
}

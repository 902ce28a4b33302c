package quicpeer

import (
	"context"
	"reflect"
	"testing"

	"github.com/narad/narad/ports"
)

// fakeLinks answers a fixed set of cursors for parent "orders", a check
// report naming what it was asked, and one credential state.
type fakeLinks []ports.RemoteCursorReport

func (f fakeLinks) RemoteLinks(parent string) []ports.RemoteCursorReport {
	if parent != "orders" {
		return nil
	}
	return f
}

func (f fakeLinks) MemberCheck(_ context.Context, req ports.RemoteCheckRequest) (ports.RemoteCheckReport, error) {
	return ports.RemoteCheckReport{Node: "owner", Result: "fail", Class: "target_missing", TargetID: req.Remote + "/" + req.Topic + "/" + req.Source,
		CredentialVersion: 3, Warnings: []string{"w"}, SecurityEnabled: true}, nil
}

func (f fakeLinks) Credentials() []ports.RemoteCredentialReport {
	return []ports.RemoteCredentialReport{{Remote: "dr", State: "ready", CredentialVersion: 3, KeyVersion: "0123456789abcdef", Fingerprint: "0123456789ab"}}
}

func (f fakeLinks) TopicBacklog(_ context.Context, topic string) (ports.TopicBacklog, error) {
	return ports.TopicBacklog{Records: uint64(len(topic)), Complete: topic != "big"}, nil
}

func (f fakeLinks) Posture() ports.RemotePosture {
	return ports.RemotePosture{Node: "owner", SecurityEnabled: true, LegacyClusterAuth: true}
}

// ensure that a remote links request crosses two nodes intact (op 36,
// mode links): the owner's cursors of the parent come back as reported.
func TestRemoteCheckLinksCrossTwoNodes(t *testing.T) {
	t.Parallel()
	want := []ports.RemoteCursorReport{
		{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, LastOKMs: 1_700_000_000_000, LastCheckMs: 1_700_000_000_500, Lag: 12, OldestUnsentMs: 1_699_999_999_000},
		{Partition: 2, Child: "orders-dr", State: "rejected_record", BlockedAt: 41, Lag: -1},
	}
	srv, _ := newServer(t, ServerOptions{})
	RegisterRemoteCheck(srv, fakeLinks(want))
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	got, err := p.RemoteLinks(context.Background(), "owner", "orders")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v), want %+v", got, err, want)
	}
	if got, err := p.RemoteLinks(context.Background(), "owner", "other"); err != nil || len(got) != 0 {
		t.Fatalf("another parent: %+v (%v)", got, err)
	}
	if _, err := p.RemoteLinks(context.Background(), "owner", "bad/name"); err == nil {
		t.Fatal("a bad parent name was served")
	}
	rep, err := p.MemberCheck(context.Background(), "owner", ports.RemoteCheckRequest{Remote: "dr", Topic: "orders", Source: "src"})
	if err != nil || rep.TargetID != "dr/orders/src" || rep.Class != "target_missing" || rep.CredentialVersion != 3 || !rep.SecurityEnabled {
		t.Fatalf("check: %+v (%v)", rep, err)
	}
	creds, err := p.Credentials(context.Background(), "owner")
	if err != nil || len(creds) != 1 || creds[0].State != "ready" || creds[0].KeyVersion != "0123456789abcdef" {
		t.Fatalf("credentials: %+v (%v)", creds, err)
	}
	pos, err := p.Posture(context.Background(), "owner")
	if err != nil || pos != (ports.RemotePosture{Node: "owner", SecurityEnabled: true, LegacyClusterAuth: true}) {
		t.Fatalf("posture: %+v (%v)", pos, err)
	}
	if b, err := p.TopicBacklog(context.Background(), "owner", "orders"); err != nil || b != (ports.TopicBacklog{Records: 6, Complete: true}) {
		t.Fatalf("unshipped: %+v (%v)", b, err)
	}
	if b, err := p.TopicBacklog(context.Background(), "owner", "big"); err != nil || b.Complete {
		t.Fatalf("unshipped past the scan bound: %+v (%v)", b, err)
	}
}

// FuzzRemoteCheckPayloads feeds arbitrary bytes to both decoders: never a
// panic, and a decoded reply holds only cursors in range.
func FuzzRemoteCheckPayloads(f *testing.F) {
	f.Add([]byte(`{"mode":"links","parent":"orders"}`))
	f.Add([]byte(`{"mode":"check","remote":"dr","topic":"orders","source":"src"}`))
	f.Add([]byte(`{"mode":"credentials"}`))
	f.Add([]byte(`{"mode":"posture"}`))
	f.Add([]byte(`{"mode":"unshipped","parent":"orders"}`))
	f.Add([]byte(`{"cursors":[{"partition":0,"child":"c","state":"running","blocked_at":-1,"last_ok_ms":0,"last_check_ms":0,"lag":0}]}`))
	f.Add([]byte(`{"cursors":[{"partition":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeRemoteCheckRequest(b)
		got, err := decodeRemoteLinks(b)
		if err != nil {
			return
		}
		for _, c := range got {
			if c.Partition < 0 || c.Child == "" || c.BlockedAt < -1 || c.Lag < -1 {
				t.Fatalf("decoded %+v", c)
			}
		}
	})
}

package remotes_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// peersFake answers for member n2: a check report (or err), a
// credential state and a posture (security on unless posture is set).
type peersFake struct {
	report  ports.RemoteCheckReport
	err     error
	creds   []ports.RemoteCredentialReport
	posture *ports.RemotePosture
}

func (p *peersFake) Posture(_ context.Context, node string) (ports.RemotePosture, error) {
	if p.posture != nil {
		return *p.posture, p.err
	}
	return ports.RemotePosture{Node: node, SecurityEnabled: true}, p.err
}

func (p *peersFake) MemberCheck(context.Context, string, ports.RemoteCheckRequest) (ports.RemoteCheckReport, error) {
	return p.report, p.err
}

func (p *peersFake) Credentials(context.Context, string) ([]ports.RemoteCredentialReport, error) {
	return p.creds, p.err
}

// membersFixture has members n1 (this node) and n2, an allowlist, and a
// service asking n2 through peers.
func membersFixture(t *testing.T, peers *peersFake) (*fixture, *remotes.Service) {
	t.Helper()
	f := newFixture(t, true)
	f.transport.Allowlist = true
	f.create(t, "dr")
	f.target(t)
	for _, id := range []string{"n1", "n2"} {
		f.propose(t, &meta.MemberJoin{ID: id, Addr: id + ":7942", ClusterAddr: id + ":7943", EntryTypes: meta.AppliesThroughType})
	}
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: true}, remotes.Deps{Store: f.meta, Keyring: f.keyring,
		Transport: f.transport, Clock: f.clock, Audit: f.audit, Random: rand.Reader, Members: peers}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	return f, svc
}

// With an allowlist every member runs the checks and the verdict folds
// them (internals.md §7.4, §7.5): a member that does not answer is
// unreachable, one on an older credential stale, members seeing different
// targets disagree.
func TestChecksRunFromEveryMember(t *testing.T) {
	pass := ports.RemoteCheckReport{Node: "n2", Result: "pass", CredentialVersion: 1, TargetID: "00000000000000aa"}
	cases := []struct {
		name  string
		peers *peersFake
		class string
	}{
		{"all pass", &peersFake{report: pass}, ""},
		{"silent member", &peersFake{err: errors.New("no answer")}, "unreachable"},
		{"stale member", &peersFake{report: ports.RemoteCheckReport{Node: "n2", Result: "pass", CredentialVersion: 0, TargetID: "00000000000000aa"}}, "stale"},
		{"disagreement", &peersFake{report: ports.RemoteCheckReport{Node: "n2", Result: "pass", CredentialVersion: 1, TargetID: "00000000000000bb"}}, "target_disagreement"},
		{"member fails", &peersFake{report: ports.RemoteCheckReport{Node: "n2", Result: "fail", Class: "tls_failed"}}, "tls_failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, svc := membersFixture(t, c.peers)
			out, err := svc.Test(context.Background(), admin, "dr", remotes.TestRequest{Topic: "orders"})
			if err != nil || out.Class != c.class || len(out.Checks) != 2 || out.Checks[1].Node != "n2" {
				t.Fatalf("%v %+v", err, out)
			}
		})
	}
}

// The remotes listing shows the other members' credential states, stale
// when older than the remote's, unknown when a member does not answer.
func TestNodesShowEveryMembersCredential(t *testing.T) {
	peers := &peersFake{creds: []ports.RemoteCredentialReport{{Remote: "dr", State: "ready", CredentialVersion: 1}}}
	_, svc := membersFixture(t, peers)
	v, err := svc.Get(context.Background(), admin, "dr", true)
	if err != nil || len(v.Nodes) != 2 || v.Nodes[1].State != remotes.StateReady {
		t.Fatalf("%v %+v", err, v.Nodes)
	}
	if _, err := svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Password: []byte(testPassword + "-x")}); err != nil {
		t.Fatal(err)
	}
	if v, _ := svc.Get(context.Background(), admin, "dr", true); v.Nodes[1].State != remotes.StateStale {
		t.Fatalf("after a new password: %+v", v.Nodes)
	}
	peers.err = errors.New("no answer")
	if v, _ := svc.Get(context.Background(), admin, "dr", true); v.Nodes[1].State != remotes.StateUnknown {
		t.Fatalf("silent member: %+v", v.Nodes)
	}
	if l, err := svc.List(context.Background(), admin, true); err != nil || len(l.NotAnswering) != 1 || l.NotAnswering[0] != "n2" {
		t.Fatalf("listing of a silent member: %v %+v", err, l.NotAnswering)
	}

}

package remotes_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// serversFake is the Raft configuration the release gate reads.
type serversFake struct{ voters []uint64 }

func (s serversFake) Membership(context.Context) (ports.RaftMembership, error) {
	m := ports.RaftMembership{Voters: map[uint64]string{}}
	for _, id := range s.voters {
		m.Voters[id] = "addr"
	}
	return m, nil
}

// gateFixture has this node n1 and member n2 (applying through n2Types),
// a remote dr, and a service asking n2 through peers.
func gateFixture(t *testing.T, n2Types meta.EntryType, peers *peersFake, servers remotes.Servers, legacy bool) (*fixture, *remotes.Service) {
	t.Helper()
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	f.propose(t, &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943", EntryTypes: meta.AppliesThroughType})
	f.propose(t, &meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943", EntryTypes: n2Types})
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: true, LegacyClusterAuth: legacy}, remotes.Deps{Store: f.meta,
		Keyring: f.keyring, Transport: f.transport, Clock: f.clock, Audit: f.audit, Random: rand.Reader,
		Bounds: f.logs, Stuck: f.stuck, Frontiers: frontiersFake{}, Members: peers, Servers: servers}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	return f, svc
}

func gateOf(t *testing.T, err error) *remotes.GateError {
	t.Helper()
	var g *remotes.GateError
	if !errors.As(err, &g) || !errors.Is(err, domain.ErrPrecondition) {
		t.Fatalf("want a gate's 412, got %v", err)
	}
	return g
}

// A member on an older release, or a Raft server without a member record,
// holds every remote write back with a 412 naming it (internals.md §7.8
// release gate); nothing is proposed.
func TestReleaseGateNamesTheHolder(t *testing.T) {
	ctx := context.Background()
	_, svc := gateFixture(t, meta.LegacyNewestType, &peersFake{}, nil, false)
	_, err := svc.Create(ctx, admin, remotes.CreateRequest{Name: "dr2", URL: targetURL, Username: "u", Password: []byte(testPassword)})
	if g := gateOf(t, err); g.Gate != remotes.GateRelease || len(g.Members) != 1 || g.Members[0].Node != "n2" {
		t.Fatalf("%+v", g)
	}
	if err := svc.Delete(ctx, admin, "dr", false); gateOf(t, err).Members[0].Node != "n2" {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, admin, "dr2", false); !errors.Is(err, domain.ErrRemoteNotFound) {
		t.Fatalf("a held-back create was written: %v", err)
	}

	stray := meta.ReplicaID("n9")
	_, svc = gateFixture(t, meta.AppliesThroughType, &peersFake{}, serversFake{voters: []uint64{meta.ReplicaID("n1"), stray}}, false)
	err = svc.Delete(ctx, admin, "dr", false)
	if g := gateOf(t, err); g.Members[0].Node == "n2" || g.Members[0].Node == "" {
		t.Fatalf("a record-less Raft server: %+v", g)
	}

	_, svc = gateFixture(t, meta.AppliesThroughType, &peersFake{}, serversFake{voters: []uint64{meta.ReplicaID("n1"), meta.ReplicaID("n2")}}, false)
	if err := svc.Delete(ctx, admin, "dr", false); err != nil {
		t.Fatalf("every server on this release: %v", err)
	}
}

// The posture gate (internals.md §7.8): a member with security off, one
// accepting legacy cluster auth, one that does not answer, or this node
// accepting legacy auth holds back create, change, re-encrypt and resume;
// pause and delete need the release gate alone, so they pass with a
// member down.
func TestPostureGateHoldsBackPasswordAndLinkWrites(t *testing.T) {
	ctx := context.Background()
	change := remotes.UpdateRequest{Password: []byte(testPassword + "-2")}
	cases := []struct {
		name   string
		peers  *peersFake
		legacy bool
		node   string
		reason string
	}{
		{"security off", &peersFake{posture: &ports.RemotePosture{Node: "n2"}}, false, "n2", "security is off"},
		{"legacy auth", &peersFake{posture: &ports.RemotePosture{Node: "n2", SecurityEnabled: true, LegacyClusterAuth: true}}, false, "n2", "legacy"},
		{"silent", &peersFake{err: errors.New("no answer")}, false, "n2", "did not answer"},
		{"this node legacy", &peersFake{}, true, "n1", "legacy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, svc := gateFixture(t, meta.AppliesThroughType, c.peers, nil, c.legacy)
			_, err := svc.Update(ctx, admin, "dr", change)
			g := gateOf(t, err)
			if g.Gate != remotes.GatePosture || len(g.Members) != 1 || g.Members[0].Node != c.node || !strings.Contains(g.Members[0].Reason, c.reason) {
				t.Fatalf("%+v", g)
			}
			if _, err := svc.Reencrypt(ctx, admin); !errors.As(err, &g) {
				t.Fatalf("re-encrypt: %v", err)
			}
			f.parent(t, 0, 0)
			f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: parentTopicID, Child: "orders-dr", ChildID: "00000000000000b1",
				Epoch: "00000000000000e1", Offsets: []int64{0, 0}, Remote: "dr", RemoteID: f.remote(t, "dr").ID, RemoteTopic: "orders",
				From: meta.RemoteFromAttach, Lanes: 1})
			if _, err := svc.Resume(ctx, admin, "orders", "orders-dr", false); !errors.As(err, &g) {
				t.Fatalf("resume: %v", err)
			}
			if _, err := svc.Pause(ctx, admin, "orders", "orders-dr", "maintenance"); err != nil {
				t.Fatalf("pause needs the release gate alone: %v", err)
			}
		})
	}
	_, svc := gateFixture(t, meta.AppliesThroughType, &peersFake{}, nil, false)
	if _, err := svc.Update(ctx, admin, "dr", change); err != nil {
		t.Fatalf("every member secured: %v", err)
	}
}

package remotes_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// followerStore is n1's replica while n2 leads.
type followerStore struct{ *fake.MetaStore }

func (followerStore) IsLeader() bool         { return false }
func (followerStore) Leader() (uint64, bool) { return meta.ReplicaID("n2"), true }

// writerFake stands for op 35 to n2: it hands every write to the leader's
// service, or answers err.
type writerFake struct {
	leader *remotes.Service
	got    []ports.RemoteWrite
	nodes  []string
	err    error
}

func (w *writerFake) RemoteWrite(ctx context.Context, node string, rw ports.RemoteWrite) (ports.MetaApplied, error) {
	w.got, w.nodes = append(w.got, rw), append(w.nodes, node)
	if w.err != nil {
		return ports.MetaApplied{}, w.err
	}
	return w.leader.LeaderWrite(ctx, rw)
}

// leaderFixture: n1 takes the requests as a follower, n2 leads with its
// own audit log.
func leaderFixture(t *testing.T) (*fixture, *remotes.Service, *writerFake, *fake.Audit) {
	t.Helper()
	f := newFixture(t, true)
	f.target(t)
	for _, id := range []string{"n1", "n2"} {
		f.propose(t, &meta.MemberJoin{ID: id, Addr: id + ":7942", ClusterAddr: id + ":7943", EntryTypes: meta.AppliesThroughType})
	}
	leaderAudit := &fake.Audit{}
	leader, err := remotes.New(remotes.Options{Self: "n2", APIHopEncrypted: true}, remotes.Deps{Store: f.meta, Keyring: f.keyring,
		Transport: f.transport, Clock: f.clock, Audit: leaderAudit, Random: rand.Reader}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	w := &writerFake{leader: leader}
	svc, err := remotes.New(remotes.Options{Self: "n1", APIHopEncrypted: true}, remotes.Deps{Store: followerStore{f.meta},
		Keyring: f.keyring, Transport: f.transport, Clock: f.clock, Audit: f.audit, Random: rand.Reader,
		Members: &peersFake{}, Writer: w}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	return f, svc, w, leaderAudit
}

var requestID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// A remote write taken by a follower goes to the leader as one
// RemoteWrite (op 35) carrying the sub-operation, the caller and a request
// id; the leader proposes it and writes the authoritative line
// (committed), the follower its own line with the same request id
// (internals.md §7.8, §7.10); the answer reads the write back.
func TestFollowerHandsRemoteWritesToTheLeader(t *testing.T) {
	f, svc, w, leaderAudit := leaderFixture(t)
	v, err := svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "replicator", Password: []byte(testPassword)})
	if err != nil || v.Remote.Name != "dr" || v.Remote.CredentialVersion != 1 {
		t.Fatalf("%v %+v", err, v)
	}
	if len(w.got) != 1 || w.nodes[0] != "n2" || w.got[0].Op != ports.AuditRemoteCreate || w.got[0].Actor != "root" ||
		!requestID.MatchString(w.got[0].RequestID) || w.got[0].Envelope.Event.Type() != meta.TypePutRemote {
		t.Fatalf("handed over: %v %+v", w.nodes, w.got)
	}
	lines := leaderAudit.Events()
	if len(lines) != 1 || !lines[0].Leader || lines[0].Outcome != ports.AuditCommitted || lines[0].RequestID != w.got[0].RequestID {
		t.Fatalf("leader's line: %+v", lines)
	}
	ingress := f.audit.Events()
	if len(ingress) != 1 || ingress[0].Leader || ingress[0].Outcome != ports.AuditOK || ingress[0].RequestID != w.got[0].RequestID {
		t.Fatalf("ingress line: %+v", ingress)
	}
	for _, l := range append(lines, ingress...) {
		if strings.Contains(fmt.Sprint(l), testPassword) || strings.Contains(fmt.Sprint(l), "dr.example.com") {
			t.Fatalf("an audit line holds the password or the URL: %+v", l)
		}
	}

	// The leader's refusal of the entry is audited as refused there.
	if _, err := svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "replicator",
		Password: []byte(testPassword)}); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("a second dr: %v", err)
	}
	if lines := leaderAudit.Events(); len(lines) != 2 || lines[1].Outcome != ports.AuditRefused {
		t.Fatalf("leader's refusal line: %+v", lines)
	}
}

// The leader's own release gate, and a leader that does not serve op 35,
// answer 412 naming the leader (internals.md §7.8); a write the leader
// cannot be reached for is retryable (503).
func TestLeaderRefusalsNameTheLeader(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		reason string
	}{
		{"leader's gate", domain.Refuse(domain.ErrPrecondition, "member n3 applies through type 22"), "n3"},
		{"older leader", fmt.Errorf("op 35: %w", domain.ErrOlderRelease), "older release"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, svc, w, _ := leaderFixture(t)
			if _, err := svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "replicator",
				Password: []byte(testPassword)}); err != nil {
				t.Fatal(err)
			}
			w.err = c.err
			_, err := svc.Update(context.Background(), admin, "dr", remotes.UpdateRequest{Password: []byte(testPassword + "-2")})
			var g *remotes.GateError
			if !errors.As(err, &g) || len(g.Members) != 1 || g.Members[0].Node != "n2" || !strings.Contains(g.Members[0].Reason, c.reason) {
				t.Fatalf("%v", err)
			}
		})
	}
	_, svc, w, _ := leaderFixture(t)
	w.err = fmt.Errorf("quicpeer: unreachable: %w", domain.ErrNotSent)
	_, err := svc.Create(context.Background(), admin, remotes.CreateRequest{Name: "dr", URL: targetURL, Username: "replicator", Password: []byte(testPassword)})
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("unreachable leader: %v", err)
	}
}

// LeaderWrite proposes remote entries only.
func TestLeaderWriteTakesRemoteEntriesOnly(t *testing.T) {
	_, _, w, leaderAudit := leaderFixture(t)
	_, err := w.leader.LeaderWrite(context.Background(), ports.RemoteWrite{Op: "topic.create", Actor: "root",
		Envelope: meta.Envelope{Actor: "root", Event: &meta.CreateTopic{Name: "x", ID: "00000000000000c1", Partitions: 1, VisibilityTimeoutMs: 30_000}}})
	if !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("%v", err)
	}
	if lines := leaderAudit.Events(); len(lines) != 1 || lines[0].Outcome != ports.AuditRefused {
		t.Fatalf("%+v", lines)
	}
}

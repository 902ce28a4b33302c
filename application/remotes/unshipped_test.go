package remotes_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// backlogsFake answers each member's backlog of parent "orders" (other
// topics hold nothing); an absent member does not answer, overScanLimit
// stands for a scan that stopped at its bound.
type backlogsFake map[string]uint64

const overScanLimit = ^uint64(0)

func (b backlogsFake) TopicBacklog(_ context.Context, node, topic string) (ports.TopicBacklog, error) {
	n, ok := b[node]
	switch {
	case !ok:
		return ports.TopicBacklog{}, context.DeadlineExceeded
	case topic != "orders":
		return ports.TopicBacklog{Complete: true}, nil
	case n == overScanLimit:
		return ports.TopicBacklog{Records: 1_000_000}, nil
	}
	return ports.TopicBacklog{Records: n, Complete: true}, nil
}

// unshippedFixture has parent "orders" of one partition owned by n1 with
// remote child "orders-dr", the lag links report and the members' backlogs.
func unshippedFixture(t *testing.T, lag int64, backlogs backlogsFake) (*fixture, *remotes.Service) {
	t.Helper()
	f := newFixture(t, true)
	f.create(t, "dr")
	f.propose(t, &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: parentTopicID, Partitions: 1, VisibilityTimeoutMs: 30_000})
	f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: parentTopicID, Partition: 0, Owner: "n1"})
	f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: parentTopicID, Child: "orders-dr", ChildID: "00000000000000b1",
		Epoch: "00000000000000e1", Offsets: []int64{0}, Remote: "dr", RemoteID: f.remote(t, "dr").ID, RemoteTopic: "orders",
		From: meta.RemoteFromAttach, Lanes: 1})
	links := linksFake{"n1": {{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: lag}}}
	svc, err := remotes.New(remotes.Options{Self: "n1"}, remotes.Deps{Store: f.meta, Keyring: f.keyring, Transport: f.transport,
		Clock: f.clock, Audit: f.audit, Random: rand.Reader, Links: links, Backlogs: backlogs}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	return f, svc
}

// A remote child's stub or its parent goes only once nothing is left to
// ship: no lag, every owner and member answering, no dispatch backlog;
// force abandons the rest (internals.md §7.9, api.md §2.12).
func TestBeforeRemovalRefusesUnshippedRecords(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		lag      int64
		backlogs backlogsFake
		clear    bool
	}{
		{"clear", 0, backlogsFake{"n1": 0}, true},
		{"lag", 5, backlogsFake{"n1": 0}, false},
		{"lag unknown", -1, backlogsFake{"n1": 0}, false},
		{"backlog", 0, backlogsFake{"n1": 3}, false},
		{"member silent", 0, backlogsFake{}, false},
		{"backlog over the scan limit", 0, backlogsFake{"n1": overScanLimit}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, svc := unshippedFixture(t, c.lag, c.backlogs)
			for _, name := range []string{"orders-dr", "orders"} {
				err := svc.BeforeRemovalOf(ctx, admin, name, false)
				var ue *remotes.UnshippedError
				if c.clear != (err == nil) || !c.clear && !errors.As(err, &ue) {
					t.Fatalf("%s: %v", name, err)
				}
				f.clock.Advance(10 * time.Second)
			}
			before := f.audit.Count(ports.AuditRemoteChildDelete)
			if err := svc.BeforeRemovalOf(ctx, admin, "orders-dr", true); err != nil {
				t.Fatalf("force: %v", err)
			}
			if f.audit.Count(ports.AuditRemoteChildDelete) != before+1 {
				t.Fatal("a forced removal left no audit line")
			}
		})
	}
}

// One check of a parent per 10 s; security off and a caller who is neither
// admin nor the parent's owner are refused first; a topic without remote
// children passes untouched.
func TestBeforeRemovalRules(t *testing.T) {
	ctx := context.Background()
	_, svc := unshippedFixture(t, 0, backlogsFake{"n1": 0})
	if err := svc.BeforeRemovalOf(ctx, admin, "orders-dr", false); err != nil {
		t.Fatal(err)
	}
	if err := svc.BeforeRemovalOf(ctx, admin, "orders-dr", false); !errors.Is(err, domain.ErrRateLimited) {
		t.Fatalf("second check within 10s: %v", err)
	}
	bob := access.FromUser(meta.User{Username: "bob", Grants: []meta.Grant{{Action: access.ActionProduce, Patterns: []string{"*"}}}})
	if err := svc.BeforeRemovalOf(ctx, bob, "orders-dr", false); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("bob: %v", err)
	}
	if err := svc.BeforeRemovalOf(ctx, access.Open("127.0.0.1"), "orders-dr", false); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("security off: %v", err)
	}
	if err := svc.BeforeRemovalOf(ctx, admin, "nope", false); err != nil {
		t.Fatalf("no such topic: %v", err)
	}
}

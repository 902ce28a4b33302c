package remotes_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// linksFake answers per node; a node absent from the map does not answer.
type linksFake map[string][]ports.RemoteCursorReport

func (l linksFake) RemoteLinks(_ context.Context, node, _ string) ([]ports.RemoteCursorReport, error) {
	got, ok := l[node]
	if !ok {
		return nil, context.DeadlineExceeded
	}
	return got, nil
}

// The listing folds the owners' reports (internals.md §7.4): the worst
// partition's state, unknown where an owner did not report, the record a
// partition is stuck on, the oldest last check, and unverified for a
// running cursor without a check for 10 minutes.
func TestLinkStatesFoldTheOwnersReports(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: parentTopicID, Partitions: 3, VisibilityTimeoutMs: 30_000})
	for p, owner := range []string{"n1", "n2", "n3"} {
		f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: parentTopicID, Partition: int32(p), Owner: owner})
	}
	f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: parentTopicID, Child: "orders-dr", ChildID: "00000000000000b1",
		Epoch: "00000000000000e1", Offsets: []int64{0, 0, 0}, Remote: "dr", RemoteID: f.remote(t, "dr").ID, RemoteTopic: "orders",
		From: meta.RemoteFromAttach, Lanes: 1})
	now := f.clock.Now().UnixMilli()
	links := linksFake{
		"n1": {{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, LastOKMs: now - 1000, LastCheckMs: now - 11*60_000}},
		"n2": {{Partition: 1, Child: "orders-dr", State: "rejected_record", BlockedAt: 41, LastOKMs: now - 5000, LastCheckMs: now - 2000,
			Lag: 3, OldestUnsentMs: now - 90_000}},
	}
	svc, err := remotes.New(remotes.Options{Self: "n1"}, remotes.Deps{Store: f.meta, Keyring: f.keyring, Transport: f.transport,
		Clock: f.clock, Audit: f.audit, Random: rand.Reader, Links: links}, f.cache)
	if err != nil {
		t.Fatal(err)
	}
	stubs, got, err := svc.LinksOf(context.Background(), "orders")
	if err != nil || len(stubs) != 1 {
		t.Fatalf("%v %+v", err, stubs)
	}
	l := got["orders-dr"]
	if l.State != "rejected_record" || l.Blocked == nil || l.Blocked.Partition != 1 || l.Blocked.BlockedAt != 41 {
		t.Fatalf("link %+v", l)
	}
	if l.Partitions[2].State != "unknown" || l.Partitions[2].Node != "n3" || l.TargetVerifiedMs != 0 || !l.Unverified || l.LastSuccessMs != now-1000 {
		t.Fatalf("link %+v", l)
	}
	if l.LagSeconds != 90 || l.HeadroomSeconds != nil || l.SourceDrained {
		t.Fatalf("lag %d headroom %v drained %v", l.LagSeconds, l.HeadroomSeconds, l.SourceDrained)
	}
	links["n3"] = []ports.RemoteCursorReport{{Partition: 2, Child: "orders-dr", State: "running", BlockedAt: -1, LastCheckMs: now - 3000}}
	_, got, _ = svc.LinksOf(context.Background(), "orders")
	if l := got["orders-dr"]; l.TargetVerifiedMs != now-11*60_000 {
		t.Fatalf("verified %d", l.TargetVerifiedMs)
	}
	f.clock.Advance(time.Second)
	f.propose(t, &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: stubs[0].ID, Op: meta.RemoteOpPause})
	links["n2"] = []ports.RemoteCursorReport{{Partition: 1, Child: "orders-dr", State: "running", BlockedAt: -1, LastCheckMs: now}}
	_, got, _ = svc.LinksOf(context.Background(), "orders")
	if l := got["orders-dr"]; l.State != "paused" {
		t.Fatalf("paused link %+v", l)
	}
}

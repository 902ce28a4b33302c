package remotes_test

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
)

// A partition row of a remote child carries the link's start on that
// partition (its attach offset; 0 for a partition the parent gained after
// the attach), the cursor's next offset and the parent's high watermark
// as the owner reports them, and the consumers' ack frontier (api.md
// §2.11); each unknown (-1) where nobody could say.
func TestPartitionRowsCarryPositions(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.propose(t, &meta.CreateTopic{Name: "orders", ID: parentTopicID, Partitions: 2, VisibilityTimeoutMs: 30_000})
	for p, owner := range []string{"n1", "n2"} {
		f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: parentTopicID, Partition: int32(p), Owner: owner})
	}
	f.propose(t, &meta.AttachRemoteChild{Parent: "orders", ParentID: parentTopicID, Child: "orders-dr", ChildID: "00000000000000b1",
		Epoch: "00000000000000e1", Offsets: []int64{4, 2}, Remote: "dr", RemoteID: f.remote(t, "dr").ID, RemoteTopic: "orders",
		From: meta.RemoteFromAttach, Lanes: 1})
	f.propose(t, &meta.UpdateTopic{Name: "orders", Partitions: 3})
	f.propose(t, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: parentTopicID, Partition: 2, Owner: "n2"})
	links := linksFake{
		"n1": {{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: 2, NextOffset: 9, HighWatermark: 11}},
		"n2": {{Partition: 2, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: -1, NextOffset: -1, HighWatermark: 5}},
	}
	svc := func(fr remotes.Frontiers) *remotes.Service {
		s, err := remotes.New(remotes.Options{Self: "n1"}, remotes.Deps{Store: f.meta, Keyring: f.keyring, Transport: f.transport,
			Clock: f.clock, Audit: f.audit, Random: rand.Reader, Links: links, Frontiers: fr}, f.cache)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	_, got, err := svc(frontiersFake{}).LinksOf(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ start, next, hwm, acked int64 }
	want := []row{{4, 9, 11, 3}, {2, -1, -1, 3}, {0, -1, 5, 3}} // partition 1's cursor did not report
	rows := got["orders-dr"].Partitions
	if len(rows) != len(want) {
		t.Fatalf("rows %+v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if g := (row{r.StartOffset, r.NextOffset, r.HighWatermark, r.AckFrontier}); g != w {
			t.Errorf("partition %d: %+v, want %+v", i, g, w)
		}
	}
	if got["orders-dr"].SourceDrained {
		t.Error("consumers at 3 have not acked past the start 4 of partition 0")
	}
	// Frontiers that cannot be read leave the ack frontier unknown.
	_, got, _ = svc(nil).LinksOf(context.Background(), "orders")
	for _, r := range got["orders-dr"].Partitions {
		if r.AckFrontier != -1 || r.StartOffset < 0 {
			t.Errorf("without frontiers: %+v", r)
		}
	}
}

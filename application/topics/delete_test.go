package topics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that delete then create of a name gives an empty topic with a new
// id: the old incarnation's records are purged and never shown again
// (conformance 64, 65, 168; story F21).
func TestDeleteThenRecreateIsEmpty(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	old := f.create(t, topics.CreateRequest{Caller: anyone, Name: "orders"})
	f.commit(t, old, 0, 5)
	f.commit(t, old, 2, 1)
	got, err := f.svc.Delete(ctx, anyone, "orders")
	if err != nil || got.PurgeErr != nil || got.Topic.ID != old.ID {
		t.Fatalf("delete: %+v %v", got, err)
	}
	if _, err := f.svc.Describe(ctx, topics.DescribeRequest{Caller: anyone, Name: "orders"}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
	if _, err := f.svc.Delete(ctx, anyone, "orders"); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(old.ID), Partition: 0}
	if b, err := f.logs.Bounds(ref); err != nil || b.HighWatermark != 0 {
		t.Fatalf("old incarnation's partition after purge: %+v %v", b, err)
	}
	fresh := f.create(t, topics.CreateRequest{Caller: anyone, Name: "orders"})
	if fresh.ID == old.ID {
		t.Fatal("recreated topic kept the old id")
	}
	for _, st := range f.describe(t, "orders").Stats {
		if st.Status != topics.StatusOK || st.HighWatermark != 0 || st.OldestOffset != 0 {
			t.Fatalf("recreated topic shows old data: %v", st)
		}
	}
	f.commit(t, fresh, 0, 1)
	if d := f.describe(t, "orders"); d.Stats[0].HighWatermark != 1 {
		t.Fatalf("first record of the new incarnation: %v", d.Stats[0])
	}
}

// Ensure that without the leader's confirmation the purge keeps the data
// (internals.md §8.6: on doubt, keep), while the delete itself succeeds.
func TestDeleteKeepsDataWhenUnconfirmed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	f.commit(t, tp, 1, 2)
	f.meta.FailBarrier(meta.ErrUnavailable)
	got, err := f.svc.Delete(context.Background(), anyone, "t")
	if err != nil || !errors.Is(got.PurgeErr, meta.ErrUnavailable) {
		t.Fatalf("delete: %+v %v", got, err)
	}
	ref := domain.PartitionRef{Topic: "t", TopicID: domain.TopicID(tp.ID), Partition: 1}
	if b, err := f.logs.Bounds(ref); err != nil || b.HighWatermark != 2 {
		t.Fatalf("unconfirmed purge destroyed data: %+v %v", b, err)
	}
}

// Ensure that a purge never touches a newer incarnation that already owns
// the name's data on this node.
func TestPurgeLeavesNewIncarnationAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	old := f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	f.commit(t, old, 0, 1)
	f.propose(t, &meta.DeleteTopicIf{Name: "t", ID: old.ID})
	fresh := f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	f.commit(t, fresh, 0, 3)
	if _, err := f.svc.Delete(context.Background(), anyone, "t"); err != nil {
		t.Fatal(err)
	}
	// A late purge of the old incarnation (what a retried broadcast does).
	if err := f.logs.Remove(domain.PartitionRef{Topic: "t", TopicID: domain.TopicID(old.ID), Partition: 0}); err != nil {
		t.Fatal(err)
	}
	next := f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	if next.ID == fresh.ID || next.ID == old.ID {
		t.Fatal("ids reused")
	}
	if d := f.describe(t, "t"); d.Stats[0].HighWatermark != 0 {
		t.Fatalf("third incarnation sees data: %v", d.Stats[0])
	}
}

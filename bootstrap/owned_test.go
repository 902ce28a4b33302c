package bootstrap

import (
	"context"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain/meta"
)

// countingTopics counts whole-topic reads.
type countingTopics struct {
	*fake.MetaStore
	lists int
}

func (c *countingTopics) ListTopics(after string, limit int) ([]meta.Topic, error) {
	c.lists++
	return c.MetaStore.ListTopics(after, limit)
}

// ensure that the scrape-time gauges' view of the metadata is read again
// only when a topic or an assignment changed: a heartbeat or a scrape
// alone decodes nothing, a new assignment is seen at the next read.
func TestOwnedViewRereadsOnlyWhenTopicsOrAssignmentsMove(t *testing.T) {
	fs := fake.NewMetaStore()
	defer fs.Close()
	store := &countingTopics{MetaStore: fs}
	propose := func(ev meta.Event) {
		t.Helper()
		if got, err := fs.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1000, Event: ev}); err != nil || !got.Result.OK() {
			t.Fatalf("%s: %+v %v", ev.Type(), got, err)
		}
	}
	propose(&meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	propose(&meta.CreateTopic{Name: "orders", ID: "00000000000000a1", Partitions: 2, VisibilityTimeoutMs: 30_000})
	propose(&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"})
	propose(&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "00000000000000a1", Partition: 1, Owner: "n2"})
	v := newOwnedView(store, "n1")
	topics, owned, err := v.read()
	if err != nil || topics != 1 || len(owned) != 1 || owned[0].Partition != 0 || owned[0].TopicID != "00000000000000a1" {
		t.Fatalf("read %d topics, owned %+v, %v", topics, owned, err)
	}
	propose(&meta.MemberHeartbeat{ID: "n1"})
	for range 3 {
		if _, _, err := v.read(); err != nil {
			t.Fatal(err)
		}
	}
	if store.lists != 1 {
		t.Fatalf("%d topic listings for four reads and a heartbeat, want 1", store.lists)
	}
	propose(&meta.CreateTopic{Name: "audit", ID: "00000000000000b2", Partitions: 1, VisibilityTimeoutMs: 30_000})
	propose(&meta.AssignPartitionIfAbsent{Topic: "audit", TopicID: "00000000000000b2", Partition: 0, Owner: "n1"})
	topics, owned, err = v.read()
	if err != nil || topics != 2 || len(owned) != 2 || store.lists != 2 {
		t.Fatalf("after a new topic: %d topics, owned %+v, %d listings, %v", topics, owned, store.lists, err)
	}
}

// ensure that narad_colocated_child_partitions counts a child partition
// only when its owner also owns the parent's partition of the same index
// (api.md §5.3), and counts nothing for a remote stub or a partition the
// parent lacks.
func TestColocatedChildrenCount(t *testing.T) {
	topics := []meta.Topic{
		{Name: "p", Partitions: 3, Children: []string{"c", "r"}},
		{Name: "c", Partitions: 4, Parent: "p"},
		{Name: "r", Parent: "p", Remote: &meta.RemoteLink{Name: "dr"}},
		{Name: "solo", Partitions: 1},
	}
	owners := map[string]map[int32]string{
		"p":    {0: "n1", 1: "n2", 2: "n3"},
		"c":    {0: "n2", 1: "n2", 2: "n3", 3: "n3"},
		"solo": {0: "n1"},
	}
	if got := colocatedChildren(topics, owners); got != 2 {
		t.Fatalf("colocated %d, want 2 (c/1 on n2, c/2 on n3)", got)
	}
}

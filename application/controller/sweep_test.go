package controller_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that the sweep gives every unowned partition an owner round-robin
// over alive, non-draining members sorted by id, that owned partitions keep
// their owner even when it is dead, and that a second pass proposes nothing
// (internals §8.7, story F22).
func TestSweepPlacesUnownedAndNeverMoves(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n3", "n1", "n2", "n4", "n5")
	f.commit(t, startTime, &meta.MarkMemberDeadIf{ID: "n4", Heartbeat: startTime.Unix()})
	f.commit(t, startTime, &meta.SetMemberDraining{ID: "n5", Draining: true})
	f.topic(t, "orders", idA, 6)
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: idA, Partition: 1, Owner: "n3"})
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: idA, Partition: 4, Owner: "n4"})
	f.topic(t, "audit", idB, 2)
	f.tick(t)
	want := map[string]map[int32]string{
		"orders": {0: "n1", 1: "n3", 2: "n3", 3: "n1", 4: "n4", 5: "n3"},
		"audit":  {0: "n1", 1: "n2"},
	}
	for topic, w := range want {
		got := f.owners(t, topic)
		for p, o := range w {
			if got[p] != o {
				t.Fatalf("%s partition %d on %q, want %q (all %v)", topic, p, got[p], o, got)
			}
		}
	}
	placed := len(events[*meta.AssignPartitionIfAbsent](f.store))
	if placed != 6 {
		t.Fatalf("%d placements proposed, want 6 (the unowned partitions only)", placed)
	}
	f.tick(t)
	if again := len(events[*meta.AssignPartitionIfAbsent](f.store)); again != placed {
		t.Fatalf("a second pass proposed %d more placements", again-placed)
	}
}

// Ensure that a grown topic's new partitions are placed by the sweep while
// the old ones stay (conformance 52).
func TestSweepPlacesGrownPartitions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.topic(t, "grow", idA, 2)
	f.tick(t)
	before := f.owners(t, "grow")
	f.commit(t, startTime, &meta.MemberJoin{ID: "n0", Addr: "n0:7942", ClusterAddr: "n0:7943"})
	f.commit(t, startTime, &meta.UpdateTopicIf{ID: idA, UpdateTopic: meta.UpdateTopic{Name: "grow", Partitions: 4, MaxInFlight: 1024, MaxAckedAhead: 1024}})
	f.tick(t)
	after := f.owners(t, "grow")
	for p, o := range before {
		if after[p] != o {
			t.Fatalf("partition %d moved from %s to %s", p, o, after[p])
		}
	}
	if after[2] != "n2" || after[3] != "n0" {
		t.Fatalf("grown partitions placed %v, want 2:n2 3:n0", after)
	}
}

// Ensure that with no alive member the sweep places nothing and proposes
// nothing.
func TestSweepWithoutMembers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.topic(t, "orders", idA, 3)
	f.tick(t)
	if got := f.owners(t, "orders"); len(got) != 0 {
		t.Fatalf("placed without members: %v", got)
	}
}

// Ensure that a fan-out child's partitions avoid the owner of the parent's
// partition of the same index, and wait while that parent partition is
// unplaced (internals §6.6 anti-affine placement, story F18).
func TestSweepChildAntiAffine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.topic(t, "parent", idA, 3)
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "parent", TopicID: idA, Partition: 0, Owner: "n1"})
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "parent", TopicID: idA, Partition: 1, Owner: "n2"})
	f.topic(t, "child", idB, 4)
	f.commit(t, startTime, &meta.AttachChild{Parent: "parent", Child: "child", Epoch: "00000000000000e1"})
	// Topics are swept by name: the child before its parent, whose
	// partition 2 is still unplaced then.
	if err := f.ctl.Tick(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := f.owners(t, "child")
	want := map[int32]string{0: "n2", 1: "n3", 3: "n1"}
	for p, o := range want {
		if got[p] != o {
			t.Fatalf("child partition %d on %q, want %q (all %v)", p, got[p], o, got)
		}
	}
	if o, ok := got[2]; ok {
		t.Fatalf("child partition 2 placed on %s while parent partition 2 was unplaced", o)
	}
	f.tick(t)
	if p2, c2 := f.owners(t, "parent")[2], f.owners(t, "child")[2]; p2 == "" || c2 == "" || p2 == c2 {
		t.Fatalf("second pass: parent 2 on %q, child 2 on %q", p2, c2)
	}
}

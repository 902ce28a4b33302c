package controller_test

import (
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that rows of a topic gone, of another incarnation, or out of
// range are pruned on the term's first pass and on every 6th pass after it,
// while live rows stay (internals §8.7, type 30).
func TestOrphanRowsPruned(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.topic(t, "live", idA, 2)
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "live", TopicID: idA, Partition: 0, Owner: "n2"})
	// Legacy overwrites (type 5) are how orphan rows come about.
	f.commit(t, startTime, &meta.AssignPartition{Topic: "gone", Partition: 0, Owner: "n2"})
	f.commit(t, startTime, &meta.AssignPartition{Topic: "live", Partition: 7, Owner: "n1"})
	f.tick(t)
	if rows := f.owners(t, "gone"); len(rows) != 0 {
		t.Fatalf("rows of a topic gone survived: %v", rows)
	}
	live := f.owners(t, "live")
	if _, ok := live[7]; ok || live[0] != "n2" || live[1] != "n2" {
		t.Fatalf("live rows after pruning: %v (want 0:n2 1:n2 and no 7)", live)
	}
	f.commit(t, startTime, &meta.AssignPartition{Topic: "gone", Partition: 3, Owner: "n1"})
	for pass := 2; pass <= 6; pass++ {
		f.tick(t)
		if rows := f.owners(t, "gone"); len(rows) != 1 {
			t.Fatalf("pass %d pruned outside the 6-pass cadence: %v", pass, rows)
		}
	}
	f.tick(t) // pass 7
	if rows := f.owners(t, "gone"); len(rows) != 0 {
		t.Fatalf("pass 7 left the orphan: %v", rows)
	}
	if n := len(events[*meta.PruneAssignment](f.store)); n != 3 {
		t.Fatalf("%d prunes proposed, want 3", n)
	}
}

package fanout_test

import (
	"fmt"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Conformance 79: records produced to the parent before the attach never
// reach the child; every record from the attach point (attach_offsets) on
// does, with its key, and the cursor file ends past the last one.
func TestCopiesFromTheAttachPointWithKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.produce(t, "orders", 0, "a=before-1", "before-2", "b=before-3")
	e.attach(t, "orders", "audit", topicID(90), 0, 3)
	e.start(t)
	e.produce(t, "orders", 0, "k1=after-1", "after-2")
	e.produce(t, "orders", 0, "k3=after-3")
	eventually(t, "the child to hold the post-attach records", func() bool {
		return equal(e.records(t, "audit", 0), "k1=after-1", "after-2", "k3=after-3")
	})
	eventually(t, "the cursor to advance to 6", func() bool {
		c, ok := e.cursorAt(t, "orders", 0, "audit")
		return ok && c.Epoch == topicID(90) && c.NextOffset == 6
	})
	// The metrics follow the cursor write: poll them too. Batch bytes count
	// key+payload (api.md §7, narad_fanout_batch_bytes): 2+7 + 7 + 2+7.
	eventually(t, "the copy and batch metrics", func() bool {
		return e.metrics.get("copied orders/audit") == 3 && e.metrics.get("batch_records") == 3 && e.metrics.get("batch_bytes") == 25
	})
	st, ok := e.engine.Cursor("orders", 0, "audit")
	if !ok || st.NextOffset != 6 || st.Lag != 0 || st.Epoch != topicID(90) {
		t.Errorf("status %+v %v", st, ok)
	}
}

// §6.2 step 3: a keyed record lands on FNV-1a(key) mod the child's
// partition count, keeping its key and, per key, its order.
func TestKeyedRecordsAreRekeyed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 3)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.start(t)
	want := make([][]string, 3)
	for i := range 30 {
		key := fmt.Sprintf("k%d", i%7)
		rec := fmt.Sprintf("%s=v%d", key, i)
		e.produce(t, "orders", 0, rec)
		p := domain.KeyPartition([]byte(key), 3)
		want[p] = append(want[p], rec)
	}
	for p := range int32(3) {
		eventually(t, fmt.Sprintf("child partition %d", p), func() bool { return equal(e.records(t, "audit", p), want[p]...) })
	}
}

// §6.2 step 3 [v3]: with the parent's partition count, a keyless record
// keeps its parent partition's index; with another count it goes
// round-robin.
func TestKeylessPlacement(t *testing.T) {
	t.Parallel()
	t.Run("same_count_keeps_index", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.topic(t, "orders", 1, 3)
		e.topic(t, "replica", 2, 3)
		e.attach(t, "orders", "replica", topicID(90), 0, 0, 0, 0)
		e.start(t)
		for p := range int32(3) {
			e.produce(t, "orders", p, fmt.Sprintf("p%d-a", p), fmt.Sprintf("p%d-b", p))
		}
		for p := range int32(3) {
			eventually(t, fmt.Sprintf("replica partition %d", p), func() bool {
				return equal(e.records(t, "replica", p), fmt.Sprintf("p%d-a", p), fmt.Sprintf("p%d-b", p))
			})
		}
	})
	t.Run("other_count_round_robin", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.topic(t, "orders", 1, 1)
		e.topic(t, "wide", 2, 2)
		e.attach(t, "orders", "wide", topicID(90), 0, 0)
		e.start(t)
		e.produce(t, "orders", 0, "r1", "r2", "r3", "r4")
		eventually(t, "the keyless records spread over both partitions", func() bool {
			return len(e.records(t, "wide", 0)) == 2 && len(e.records(t, "wide", 1)) == 2
		})
	})
}

// §6.3: without attach_offsets (a link attached before they existed) the
// cursor starts at the live tail at its first read; a partition the parent
// gains after the attach starts at 0.
func TestStartPoints(t *testing.T) {
	t.Parallel()
	t.Run("live_tail_without_offsets", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.topic(t, "orders", 1, 1)
		e.topic(t, "audit", 2, 1)
		e.produce(t, "orders", 0, "old-1", "old-2")
		e.attach(t, "orders", "audit", topicID(90), 0)
		e.start(t)
		eventually(t, "the cursor to anchor at the tail", func() bool {
			c, ok := e.cursorAt(t, "orders", 0, "audit")
			return ok && c.NextOffset == 2
		})
		e.produce(t, "orders", 0, "new-1")
		eventually(t, "the new record", func() bool { return equal(e.records(t, "audit", 0), "new-1") })
	})
	t.Run("oldest_when_moved_here_with_the_link", func(t *testing.T) {
		// internals.md §11.4: the partition moved here while the link
		// existed (its move.marker names it) but no cursor file came
		// along: replay what is retained, never skip to the tail.
		t.Parallel()
		e := newEnv(t)
		e.topic(t, "orders", 1, 1)
		e.topic(t, "audit", 2, 1)
		e.produce(t, "orders", 0, "old-1", "old-2")
		e.attach(t, "orders", "audit", topicID(90), 0)
		e.markers = markers{e.ref(t, "orders", 0): {PromotedHighWatermark: 2,
			Links: []ports.MarkerLink{{Child: "audit", Epoch: topicID(90)}}}}
		e.start(t)
		eventually(t, "the retained records", func() bool { return equal(e.records(t, "audit", 0), "old-1", "old-2") })
	})
	t.Run("partition_added_after_attach", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.topic(t, "orders", 1, 1)
		e.topic(t, "audit", 2, 1)
		e.produce(t, "orders", 0, "p0-old")
		e.attach(t, "orders", "audit", topicID(90), 0, 1)
		e.propose(t, &meta.UpdateTopic{Name: "orders", Partitions: 2})
		e.place(t, "orders", 1)
		e.produce(t, "orders", 1, "p1-first")
		e.start(t)
		e.produce(t, "orders", 0, "p0-new")
		eventually(t, "both partitions' records", func() bool {
			got := e.records(t, "audit", 0)
			return len(got) == 2 && contains(got, "p1-first") && contains(got, "p0-new")
		})
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

package fanout_test

import (
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// keysFor returns, for a 2-partition child, keys landing on partition 0
// and on partition 1.
func keysFor(t *testing.T) (on0, on1 string) {
	t.Helper()
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		switch domain.KeyPartition([]byte(k), 2) {
		case 0:
			if on0 == "" {
				on0 = k
			}
		case 1:
			if on1 == "" {
				on1 = k
			}
		}
	}
	if on0 == "" || on1 == "" {
		t.Fatal("no keys for both partitions")
	}
	return on0, on1
}

// §6.2 steps 4-6 (G5, G6): a dead child owner stalls its bucket only: the
// healthy partition gets its records once, the cursor does not advance
// while a bucket is unacknowledged, nothing is rerouted to the sibling
// partition, and once the owner answers the held records arrive, carrying
// the child's incarnation.
func TestFailingChildOwnerStallsOnlyItsBucket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 2, self, other)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	k0, k1 := keysFor(t)
	e.peers.setDown(other, true)
	e.start(t)
	e.produce(t, "orders", 0, k0+"=1", k1+"=2", k0+"=3", k1+"=4")
	eventually(t, "the healthy partition's records", func() bool { return equal(e.records(t, "audit", 0), k0+"=1", k0+"=3") })
	eventually(t, "several failed retries", func() bool { return e.peers.failed() >= 3 })
	if c, _ := e.cursorAt(t, "orders", 0, "audit"); c.NextOffset != 0 {
		t.Fatalf("cursor advanced to %d over an unacknowledged bucket", c.NextOffset)
	}
	if st, _ := e.engine.Cursor("orders", 0, "audit"); st.NextOffset != 0 || st.Lag != 4 {
		t.Fatalf("status %+v", st)
	}
	e.peers.setDown(other, false)
	eventually(t, "the cursor to advance past the slab", func() bool {
		c, _ := e.cursorAt(t, "orders", 0, "audit")
		return c.NextOffset == 4
	})
	if got := e.remote("audit", 1, other); !equal(got, k1+"=2", k1+"=4") {
		t.Fatalf("stalled partition got %v", got)
	}
	if got := e.records(t, "audit", 0); !equal(got, k0+"=1", k0+"=3") {
		t.Fatalf("healthy partition re-sent: %v", got)
	}
	for _, c := range e.peers.Commits() {
		if c.Req.TopicID != domain.TopicID(topicID(2)) {
			t.Fatalf("commit without the child's incarnation: %+v", c.Req)
		}
	}
}

// §6.3: a restarted engine resumes from the cursor file: nothing copied
// before the stop is copied again.
func TestRestartResumesFromTheCursorFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.start(t)
	e.produce(t, "orders", 0, "1", "2", "3")
	eventually(t, "the first records", func() bool { c, _ := e.cursorAt(t, "orders", 0, "audit"); return c.NextOffset == 3 })
	e.stopEngine()
	e.produce(t, "orders", 0, "4", "5")
	e.start(t)
	eventually(t, "the records produced while stopped", func() bool { return equal(e.records(t, "audit", 0), "1", "2", "3", "4", "5") })
	eventually(t, "the cursor at 5", func() bool { c, _ := e.cursorAt(t, "orders", 0, "audit"); return c.NextOffset == 5 })
	if got := e.records(t, "audit", 0); len(got) != 5 {
		t.Fatalf("duplicates after restart: %v", got)
	}
}

// §6.3: a cursor never resumes another epoch's file; it anchors at its own
// attach point, overwriting the file only once the leader confirms its
// epoch. A corrupt file replays from the attach point too.
func TestAnotherEpochsFileIsNotResumed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.produce(t, "orders", 0, "0", "1", "2", "3")
	ref := e.ref(t, "orders", 0)
	stale := ports.FanoutCursor{Epoch: topicID(80), NextOffset: 1}
	e.cursors.Put(ref, "audit", stale)
	e.attach(t, "orders", "audit", topicID(90), 0, 2)
	e.store.SetLeader(false) // the latch sets without a barrier; confirmations still need one
	e.store.FailBarrier(meta.ErrUnavailable)
	e.start(t)
	eventually(t, "several refused anchors", func() bool {
		return e.logged.times("fan-out cursor file of another epoch: not resumed") >= 3
	})
	if e.reads.count() != 0 {
		t.Fatal("an unanchored cursor read the parent")
	}
	if c, _ := e.cursors.Get(ref, "audit"); c != stale {
		t.Fatalf("file overwritten without the leader: %+v", c)
	}
	e.store.FailBarrier(nil)
	eventually(t, "records from the attach point", func() bool { return equal(e.records(t, "audit", 0), "2", "3") })
	// commit before advance: the cursor moves only after the child holds the records
	eventually(t, "the cursor at 4 in this epoch", func() bool {
		c, _ := e.cursors.Get(ref, "audit")
		return c.Epoch == topicID(90) && c.NextOffset == 4
	})
	e.stopEngine()
	e.cursors.Corrupt(ref, "audit")
	e.start(t)
	eventually(t, "a replay from the attach point", func() bool { return equal(e.records(t, "audit", 0), "2", "3", "2", "3") })
}

// §6.2 slab rules: a cursor behind the parent's retention jumps to the
// oldest retained record and counts what it never copied, only after it
// advanced.
func TestDropBehindIsCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	ref := e.ref(t, "orders", 0)
	e.logs.SetRetention("orders", ref.TopicID, time.Hour)
	e.produce(t, "orders", 0, "lost-1", "lost-2", "lost-3")
	e.logs.Advance(2 * time.Hour)
	e.produce(t, "orders", 0, "kept")
	e.start(t)
	eventually(t, "the retained record", func() bool { return equal(e.records(t, "audit", 0), "kept") })
	eventually(t, "the loss counted", func() bool { return e.metrics.get("dropped orders/audit") == 3 })
}

// §6.2 step 6: a cursor whose parent partition directory is gone stops
// instead of writing elsewhere.
func TestParentDirectoryGoneStopsTheCursor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.start(t)
	eventually(t, "the anchor", func() bool { _, ok := e.cursorAt(t, "orders", 0, "audit"); return ok })
	e.cursors.RemoveDir(e.ref(t, "orders", 0))
	e.produce(t, "orders", 0, "x")
	eventually(t, "the cursor to stop", func() bool { return e.logged.saw("fan-out parent partition directory gone: cursor stops") })
	if _, ok := e.cursorAt(t, "orders", 0, "audit"); ok {
		t.Fatal("a cursor file reappeared in a removed directory")
	}
}

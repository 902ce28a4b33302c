package fanout_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Conformance 81, §6.4: a delay child receives nothing before parent
// commit time + delay on the parent owner's clock, and everything once it
// is due; the cursor sleeps (and says until when) in between.
func TestDelayChildHoldsRecordsUntilDue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "later", 2, 1)
	e.attach(t, "orders", "later", topicID(90), 1500, 0)
	e.start(t)
	committed := e.clock.Now().UnixMilli()
	e.produce(t, "orders", 0, "k=1", "2", "k=3")
	eventually(t, "the cursor to block on the first record", func() bool {
		st, _ := e.engine.Cursor("orders", 0, "later")
		return st.BlockedUntilMs == committed+1500
	})
	e.clock.Advance(1499 * time.Millisecond)
	seen := e.reads.count()
	eventually(t, "the cursor to look again several times", func() bool { return e.reads.count() >= seen+3 })
	if got := e.records(t, "later", 0); len(got) != 0 {
		t.Fatalf("records before they were due: %v", got)
	}
	e.clock.Advance(time.Millisecond)
	eventually(t, "every record once due", func() bool { return equal(e.records(t, "later", 0), "k=1", "2", "k=3") })
	st, _ := e.engine.Cursor("orders", 0, "later")
	if st.DelayMs != 1500 || st.BlockedUntilMs != 0 {
		t.Fatalf("status after delivery %+v", st)
	}
}

// §6.5: when its link dissolves the cursor stops and removes its own
// file (the leader confirming), and a re-attach starts a fresh cursor at
// its own attach point (conformance 80).
func TestDetachStopsTheCursorAndRemovesItsFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.start(t)
	e.produce(t, "orders", 0, "1")
	eventually(t, "the first copy", func() bool { c, _ := e.cursorAt(t, "orders", 0, "audit"); return c.NextOffset == 1 })
	e.propose(t, &meta.DetachChild{Parent: "orders", Child: "audit"})
	eventually(t, "the cursor to stop and remove its file", func() bool {
		_, running := e.engine.Cursor("orders", 0, "audit")
		_, file := e.cursorAt(t, "orders", 0, "audit")
		return !running && !file
	})
	e.produce(t, "orders", 0, "while-detached")
	e.attach(t, "orders", "audit", topicID(91), 0, 2)
	e.produce(t, "orders", 0, "3")
	eventually(t, "only the post-re-attach record", func() bool { return equal(e.records(t, "audit", 0), "1", "3") })
}

// §6.5: the orphan sweep removes a file whose link the leader confirms
// dissolved, and keeps it while the leader cannot confirm.
func TestOrphanSweep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	ref := e.ref(t, "orders", 0)
	e.cursors.Put(ref, "gone", ports.FanoutCursor{Epoch: topicID(70), NextOffset: 4})
	e.store.SetLeader(false)
	e.store.FailBarrier(meta.ErrUnavailable)
	e.start(t)
	eventually(t, "the sweep to keep the file", func() bool { return e.logged.saw("fan-out orphan sweep kept a cursor file") })
	e.stopEngine()
	if _, ok := e.cursors.Get(ref, "gone"); !ok {
		t.Fatal("removed without the leader's confirmation")
	}
	e.store.FailBarrier(nil)
	e.start(t)
	eventually(t, "the orphan removed", func() bool { _, ok := e.cursors.Get(ref, "gone"); return !ok })
}

// §6.1: nothing runs while the replica is not caught up; the first pass
// after it catches up starts the cursors.
func TestNoCursorWhileNotCaughtUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.store.SetCaughtUp(false)
	e.start(t)
	eventually(t, "a skipped pass logged", func() bool {
		return e.logged.saw("fan-out reconcile skipped: metadata replica not caught up")
	})
	if len(e.engine.Cursors()) != 0 {
		t.Fatal("a cursor started on a stale replica")
	}
	e.store.SetCaughtUp(true)
	e.produce(t, "orders", 0, "x")
	eventually(t, "the copy", func() bool { return equal(e.records(t, "audit", 0), "x") })
}

// §6.1: a parent partition owned by another node runs no cursor here.
func TestOnlyOwnedParentPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 2, self, other)
	e.topic(t, "audit", 2, 2)
	e.attach(t, "orders", "audit", topicID(90), 0, 0, 0)
	e.start(t)
	eventually(t, "the owned partition's cursor", func() bool { _, ok := e.engine.Cursor("orders", 0, "audit"); return ok })
	if cs := e.engine.Cursors(); len(cs) != 1 || cs[0].Partition != 0 {
		t.Fatalf("cursors %+v", cs)
	}
}

// api.md §5.5: an attached but idle link keeps no parent log open: at the
// tail the cursor peeks at the bounds and waits, it never reads (a read
// would stamp the log as used).
func TestIdleCursorNeverReadsTheLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.opts.LongPoll = time.Millisecond
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.start(t)
	eventually(t, "many idle polls", func() bool { return e.reads.peeks() >= 20 })
	if n := e.reads.count(); n != 0 {
		t.Fatalf("an idle cursor read the parent %d times", n)
	}
}

// §6.2 step 2: the link is re-validated after the slab is read, so a slab
// read across a detach is dropped unadvanced, never copied.
func TestSlabReadAcrossADetachIsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	e.produce(t, "orders", 0, "x")
	detached := make(chan error, 1)
	e.reads.onRead = func() {
		_, err := e.store.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: &meta.DetachChild{Parent: "orders", Child: "audit"}})
		detached <- err
	}
	e.start(t)
	if err := <-detached; err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cursor to stop", func() bool { _, ok := e.engine.Cursor("orders", 0, "audit"); return !ok })
	if got := e.records(t, "audit", 0); len(got) != 0 {
		t.Fatalf("a slab read across the detach was copied: %v", got)
	}
}

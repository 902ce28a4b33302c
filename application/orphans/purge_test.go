package orphans_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/narad/narad/application/orphans"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const newID = "00000000000000c3"

// The directories a node holds for topic "orders" and a bystander.
var (
	ordersOld       = ports.TopicDir{Dir: "orders", Topic: "orders", ID: oldID, Marker: oldID}
	ordersNew       = ports.TopicDir{Dir: "orders", Topic: "orders", ID: newID, Marker: newID}
	ordersQuarantin = ports.TopicDir{Dir: "orders.stale-" + oldID, Topic: "orders", ID: oldID, Marker: oldID, Quarantine: true}
	bystander       = ports.TopicDir{Dir: "live", Topic: "live", ID: liveID, Marker: liveID}
)

// Ensure that a delete applied through the metadata log alone (proposed by
// another node) makes this node close the incarnation's logs, waking their
// waiters, and reclaim its directory once the leader confirms, leaving
// other topics alone.
func TestPurgeAfterAnotherNodesDelete(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		del  meta.Event
	}{
		{"delete_topic_if", &meta.DeleteTopicIf{Name: "orders", ID: oldID}},
		{"legacy_delete_topic", &meta.DeleteTopic{Name: "orders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPurgeEnv(t, bystander, ordersOld)
			e.create("live", liveID, 1)
			e.create("orders", oldID, 3)
			e.run(nil)
			woken, err := e.logs.Changed(refOf("orders", oldID, 2))
			if err != nil {
				t.Fatal(err)
			}
			e.commit(tc.del)
			e.waitReclaimed("orders")
			select {
			case <-woken: // closed by the removal: a consumer parked on it wakes
			case <-time.After(waitFor):
				t.Fatal("the removal woke nobody")
			}
			if got := fmt.Sprint(e.dirs.Names()); got != "[live]" {
				t.Fatalf("left %s", got)
			}
			for p := range int32(3) {
				if h := e.hwm("orders", oldID, p); h != 0 {
					t.Fatalf("partition %d kept %d records", p, h)
				}
			}
			if e.hwm("live", liveID, 0) != 1 || e.logs.removedOf(liveID) != 0 {
				t.Fatal("the bystander's data was touched")
			}
		})
	}
}

// Ensure that nothing is removed while the leader cannot confirm the
// incarnation is gone, and that the purge happens on a later attempt once it
// can, without another delete.
func TestPurgeKeepsWhileTheLeaderCannotConfirm(t *testing.T) {
	t.Parallel()
	e := newPurgeEnv(t, ordersOld)
	e.create("orders", oldID, 2)
	e.run(nil)
	e.store.FailBarrier(errors.New("no quorum"))
	e.commit(&meta.DeleteTopicIf{Name: "orders", ID: oldID})
	for range 3 { // the first attempt and two retries
		if d := e.waitDecision(); d.Destroy || d.Err == nil {
			t.Fatalf("unconfirmable decision: %+v", d)
		}
	}
	if fmt.Sprint(e.dirs.Names()) != "[orders]" || e.logs.removedOf(oldID) != 0 || e.hwm("orders", oldID, 1) != 1 {
		t.Fatalf("data destroyed without the leader: left %v, %d partitions removed", e.dirs.Names(), e.logs.removedOf(oldID))
	}
	e.store.FailBarrier(nil)
	e.waitReclaimed("orders")
	if e.hwm("orders", oldID, 1) != 0 {
		t.Fatal("the logs were not removed")
	}
}

// Ensure that after a delete and re-create of the name, only the deleted
// incarnation's data goes (its quarantine and its logs); the directory
// stamped with the new incarnation and its records stay.
func TestPurgeKeepsARecreatedIncarnation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		del  meta.Event
	}{
		{"delete_topic_if", &meta.DeleteTopicIf{Name: "orders", ID: oldID}},
		{"legacy_delete_topic", &meta.DeleteTopic{Name: "orders"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPurgeEnv(t, ordersOld)
			e.create("orders", oldID, 2)
			e.run(nil)
			e.store.HoldApply()
			e.commit(tc.del)
			e.create("orders", newID, 2)
			// The new incarnation opened here and set the old directory
			// aside; it is listed first, so when the quarantine is
			// reclaimed the pass has already judged it.
			e.dirs.replace(ordersNew, ordersQuarantin)
			if err := e.store.ReleaseApply(); err != nil {
				t.Fatal(err)
			}
			e.waitReclaimed(ordersQuarantin.Dir)
			if got := fmt.Sprint(e.dirs.Names()); got != "[orders]" {
				t.Fatalf("left %s", got)
			}
			if e.logs.removedOf(newID) != 0 || e.hwm("orders", newID, 0) != 1 || e.hwm("orders", newID, 1) != 1 {
				t.Fatal("the recreated incarnation's data was touched")
			}
		})
	}
}

// Ensure that a directory still stamped with the deleted incarnation is
// purged even when the name was recreated before the purge ran (the leader
// confirms the name now holds another incarnation).
func TestPurgeAfterTheNameWasRecreated(t *testing.T) {
	t.Parallel()
	e := newPurgeEnv(t, ordersOld)
	e.create("orders", oldID, 2)
	e.run(nil)
	e.store.HoldApply()
	e.commit(&meta.DeleteTopicIf{Name: "orders", ID: oldID})
	e.commit(&meta.CreateTopic{Name: "orders", ID: newID, Partitions: 4, VisibilityTimeoutMs: 30_000})
	if err := e.store.ReleaseApply(); err != nil {
		t.Fatal(err)
	}
	e.waitReclaimed("orders")
	if d := e.waitDecision(); !d.Destroy || d.Reason != "topic is another incarnation" {
		t.Fatalf("decision %+v", d)
	}
	if e.logs.removedOf(newID) != 0 || e.logs.removedOf(oldID) != 2 {
		t.Fatalf("removed %d of the new incarnation, %d of the old", e.logs.removedOf(newID), e.logs.removedOf(oldID))
	}
}

// Ensure that a snapshot restore, and a watch that fell behind, each make
// the purger judge every directory again: a delete it never saw as an
// entry is still purged.
func TestPurgeRescansAfterRestoreOrLag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		cause func(*ctlWatcher, *ctlSub)
	}{
		{"restore", func(_ *ctlWatcher, s *ctlSub) { s.ch <- ports.MetaChange{Index: 9, Restored: true} }},
		{"lag", func(_ *ctlWatcher, s *ctlSub) { s.end(meta.ErrWatchLagged) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newPurgeEnv(t, bystander, ordersOld)
			e.create("live", liveID, 1)
			e.create("orders", oldID, 2)
			w := newCtlWatcher()
			e.run(w)
			sub := w.next(t)
			e.commit(&meta.DeleteTopicIf{Name: "orders", ID: oldID}) // unseen: not on sub
			tc.cause(w, sub)
			e.waitReclaimed("orders")
			if fmt.Sprint(e.dirs.Names()) != "[live]" || e.logs.removedOf(oldID) != 2 {
				t.Fatalf("left %v, %d partitions removed", e.dirs.Names(), e.logs.removedOf(oldID))
			}
		})
	}
}

// Ensure that a purger started after a delete (nobody watching when it
// applied) purges it at its first pass.
func TestPurgeCatchesUpOnStart(t *testing.T) {
	t.Parallel()
	e := newPurgeEnv(t, ordersOld, bystander)
	e.create("live", liveID, 1)
	e.create("orders", oldID, 2)
	e.commit(&meta.DeleteTopicIf{Name: "orders", ID: oldID})
	e.run(nil)
	e.waitReclaimed("orders")
	if fmt.Sprint(e.dirs.Names()) != "[live]" {
		t.Fatalf("left %v", e.dirs.Names())
	}
}

// Ensure that NewPurger rejects a missing dependency.
func TestNewPurgerRejectsNil(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("no panic on nil")
		}
	}()
	e := newPurgeEnv(t)
	orphans.NewPurger(e.store, e.dirs, nil, e.confirm, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

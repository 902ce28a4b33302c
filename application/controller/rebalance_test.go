package controller_test

import (
	"testing"
	"time"

	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
)

// Ensure that the leader's pass starts the moves the planner chooses, as
// assignment targets, within the bound on moves in flight, and clears a
// move whose destination is dead or draining (internals.md §11.2); and
// that a controller without a bound plans nothing.
func TestRebalanceTargetsMovesWithinTheBound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.voters(t, "n1", "n2", "n3")
	f.topic(t, "t", "00000000000000a1", 6)
	for p := range int32(6) {
		f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: p, Owner: "n1"})
	}
	f.tick(t)
	if got := len(events[*meta.SetAssignmentTarget](f.store)); got != 0 {
		t.Fatalf("%d moves planned without a bound", got)
	}
	f.ctl = controller.New(controller.Deps{Store: f.store, Clock: f.clock, Log: discard(), Self: self, MaxInFlightMoves: 3})
	f.tick(t)
	moves, err := f.store.Moves()
	if err != nil || len(moves) != 3 {
		t.Fatalf("moves %+v, %v: want 3 (the bound)", moves, err)
	}
	to := map[string]int{}
	for _, m := range moves {
		if m.From != "n1" {
			t.Fatalf("a move from %s", m.From)
		}
		to[m.To]++
	}
	if to["n2"] == 0 || to["n3"] == 0 {
		t.Fatalf("destinations %v", to)
	}
	f.commit(t, startTime, &meta.SetMemberDraining{ID: "n3", Draining: true})
	f.tick(t)
	moves, _ = f.store.Moves()
	for _, m := range moves {
		if m.To == "n3" {
			t.Fatalf("a move to the draining n3 stayed: %+v", moves)
		}
	}
	if len(events[*meta.AbortMove](f.store)) != to["n3"] {
		t.Fatalf("aborts %d, want %d", len(events[*meta.AbortMove](f.store)), to["n3"])
	}
}

// Ensure that a move to a dead destination stays for two minutes of its
// silence (it may come back and finish) and is cleared after.
func TestRebalanceAbortsAMoveToALongDeadTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.voters(t, "n1", "n2", "n3")
	f.topic(t, "t", "00000000000000a1", 1)
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"})
	f.commit(t, startTime, &meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Target: "n3"})
	f.commit(t, startTime, &meta.MemberDead{ID: "n3"}) // silent since startTime
	f.ctl = controller.New(controller.Deps{Store: f.store, Clock: f.clock, Log: discard(), Self: self, MaxInFlightMoves: 8})
	f.clock.Advance(time.Minute)
	for _, id := range []string{"n1", "n2"} {
		f.heartbeat(t, id)
	}
	f.tick(t)
	if row, _, _ := f.store.Assignment("t", 0); row.Target != "n3" {
		t.Fatalf("a move to a destination dead for a minute was cleared: %+v", row)
	}
	f.clock.Advance(2 * time.Minute)
	for _, id := range []string{"n1", "n2"} {
		f.heartbeat(t, id)
	}
	f.tick(t)
	if row, _, _ := f.store.Assignment("t", 0); row.Target == "n3" {
		t.Fatalf("a move to a destination dead for three minutes stayed: %+v", row)
	}
}

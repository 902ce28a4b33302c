package controller_test

import (
	"testing"
	"time"

	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
)

// Ensure that once a sweep and a prune found nothing to do, later passes
// read no whole view while nothing they read moves (a heartbeat moves
// nothing), and that a new topic, a member turning alive or five minutes
// make the next pass sweep again: an idle leader's passes cost nothing in
// proportion to its topics (internals §6.1, §8.7).
func TestSettledPassesSkipTheSweepUntilAViewMoves(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.topic(t, "orders", idA, 4)
	f.tick(t) // places orders, which moves the assignment view
	f.tick(t) // finds everything placed: settles
	settledAt := f.store.scanned()
	for range 7 { // past the 6th pass, when the prune is due again
		f.heartbeat(t, "n2")
		f.tick(t)
	}
	if got := f.store.scanned() - settledAt; got != 0 {
		t.Fatalf("settled passes made %d whole-view reads, want 0", got)
	}

	f.topic(t, "audit", idB, 2)
	f.tick(t)
	if got := f.owners(t, "audit"); len(got) != 2 {
		t.Fatalf("a new topic after settling was not placed: %v", got)
	}

	f.tick(t)
	before := f.store.scanned()
	f.commit(t, f.clock.Now(), &meta.MemberJoin{ID: "n3", Addr: "n3:7942", ClusterAddr: "n3:7943"})
	f.tick(t)
	if f.store.scanned() == before {
		t.Fatal("a member turning alive did not unsettle the sweep")
	}

	f.tick(t)
	before = f.store.scanned()
	f.clock.Advance(5 * time.Minute)
	f.heartbeat(t, "n2")
	f.heartbeat(t, "n3")
	f.tick(t)
	if f.store.scanned() == before {
		t.Fatal("five settled minutes did not sweep again")
	}
}

// Ensure that a rebalance that found nothing to move, with no move in
// flight, is not run again while the views stand still, and runs again
// when a member turns draining (its partitions must go); a move in flight
// keeps the rebalance running every pass, since a stranded move is found
// by the silence of its target, which no view records.
func TestSettledRebalanceWaitsForAViewToMove(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.voters(t, "n1", "n2", "n3")
	f.ctl = controller.New(controller.Deps{Store: f.store, Clock: f.clock, Log: discard(), Self: self, MaxInFlightMoves: 8})
	f.topic(t, "orders", idA, 6)
	f.tick(t) // places orders evenly
	f.tick(t) // nothing to place or move: settles
	settledAt := f.store.scanned()
	for range 3 {
		f.heartbeat(t, "n2")
		f.heartbeat(t, "n3")
		f.tick(t)
	}
	if got := f.store.scanned() - settledAt; got != 0 {
		t.Fatalf("settled passes made %d whole-view reads, want 0", got)
	}

	f.commit(t, f.clock.Now(), &meta.SetMemberDraining{ID: "n3", Draining: true})
	f.tick(t)
	moves, err := f.store.Moves()
	if err != nil || len(moves) == 0 {
		t.Fatalf("a draining member's partitions were not moved: %+v, %v", moves, err)
	}
	for range 2 {
		before := f.store.scanned()
		f.tick(t)
		if f.store.scanned() == before {
			t.Fatal("a pass with moves in flight skipped the rebalance")
		}
	}
}

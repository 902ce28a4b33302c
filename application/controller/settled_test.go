package controller_test

import (
	"testing"
	"time"

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

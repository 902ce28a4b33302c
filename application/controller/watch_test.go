package controller_test

import (
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
)

// Ensure that in a forming cluster the watch places a topic created with no
// alive member as soon as the voters are alive, or 1 s after the latest
// arrival, without waiting for the 10 s pass (internals §8.7).
func TestWatchPlacesWhenMembersArrive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.voters(t, "n1", "n2")
	f.topic(t, "orders", idA, 2)
	f.tick(t)
	check := func() {
		t.Helper()
		if err := f.ctl.CheckMembership(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	check()
	f.commit(t, f.clock.Now(), &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"})
	check()
	if got := f.owners(t, "orders"); len(got) != 0 {
		t.Fatalf("placed while voter n2 is missing and within 1 s: %v", got)
	}
	f.clock.Advance(500 * time.Millisecond)
	f.commit(t, f.clock.Now(), &meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943"})
	check()
	if got := f.owners(t, "orders"); got[0] != "n1" || got[1] != "n2" {
		t.Fatalf("every voter alive, owners %v", got)
	}
}

// Ensure that the watch stops waiting for absent voters 1 s after the
// latest arrival.
func TestWatchSettlesAfterOneSecond(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.voters(t, "n1", "n2", "n3")
	f.topic(t, "orders", idA, 2)
	f.tick(t)
	f.commit(t, f.clock.Now(), &meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943"})
	if err := f.ctl.CheckMembership(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := f.owners(t, "orders"); len(got) != 0 {
		t.Fatalf("placed before the arrival settled: %v", got)
	}
	f.clock.Advance(time.Second)
	if err := f.ctl.CheckMembership(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := f.owners(t, "orders"); got[0] != "n2" || got[1] != "n2" {
		t.Fatalf("owners 1 s after the arrival: %v", got)
	}
}

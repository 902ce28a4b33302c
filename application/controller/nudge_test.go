package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// applied is the change a replica reports for ev.
func applied(ev meta.Event) ports.MetaChange {
	return ports.MetaChange{Envelope: meta.Envelope{Event: ev}, Result: meta.Result{Code: meta.CodeOK}}
}

// Ensure that a topic created through another node (no placement by the
// node that took the request) is placed by the leading controller as its
// entry applies, without waiting for a pass.
func TestPlaceChangedPlacesATopicCreatedElsewhere(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.tick(t)
	create := &meta.CreateTopic{Name: "fresh", ID: idA, Partitions: 3, VisibilityTimeoutMs: 30_000}
	f.commit(t, startTime, create)
	if err := f.ctl.PlaceChanged(t.Context(), []ports.MetaChange{applied(create)}); err != nil {
		t.Fatal(err)
	}
	if got := f.owners(t, "fresh"); got[0] != "n1" || got[1] != "n2" || got[2] != "n3" {
		t.Fatalf("owners %v, want 0:n1 1:n2 2:n3", got)
	}
}

// Ensure that a follower places nothing, and that a leader whose term has
// not started runs the term's first pass, which sweeps every topic.
func TestPlaceChangedStartsTheTermOnlyWhenLeading(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.topic(t, "old", idB, 2)
	f.topic(t, "t", idA, 2)
	create := applied(&meta.CreateTopic{Name: "t", ID: idA, Partitions: 2})
	f.store.SetLeader(false)
	if err := f.ctl.PlaceChanged(t.Context(), []ports.MetaChange{create}); !errors.Is(err, controller.ErrNotLeader) {
		t.Fatalf("follower: %v, want ErrNotLeader", err)
	}
	if n := len(events[*meta.AssignPartitionIfAbsent](f.store)); n != 0 {
		t.Fatalf("a follower proposed %d placements", n)
	}
	f.store.SetLeader(true)
	if err := f.ctl.PlaceChanged(t.Context(), []ports.MetaChange{create}); err != nil {
		t.Fatal(err)
	}
	if o, t2 := f.owners(t, "old"), f.owners(t, "t"); len(o) != 2 || len(t2) != 2 {
		t.Fatalf("the term's first pass placed old %v and t %v, want both whole", o, t2)
	}
}

// Ensure that entries that leave nothing unplaced propose nothing, and that
// a refused create is not acted on.
func TestPlaceChangedIgnoresWhatIsNotItsToPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.tick(t)
	before := len(events[*meta.AssignPartitionIfAbsent](f.store))
	f.topic(t, "u", idB, 2)
	refused := applied(&meta.CreateTopic{Name: "u", ID: idB, Partitions: 2})
	refused.Result.Code = meta.CodeExists
	others := []ports.MetaChange{refused, applied(&meta.MemberHeartbeat{ID: "n2"}), applied(&meta.DeleteTopic{Name: "gone"})}
	if err := f.ctl.PlaceChanged(t.Context(), others); err != nil {
		t.Fatal(err)
	}
	if n := len(events[*meta.AssignPartitionIfAbsent](f.store)); n != before {
		t.Fatalf("%d placements for entries that ask for none", n-before)
	}
}

// Ensure that placing a parent places the child that waited for it (its
// anti-affine placement defers while the parent partition is unplaced).
func TestPlaceChangedPlacesADeferredChild(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.tick(t)
	f.topic(t, "child", idB, 3)
	parent := &meta.CreateTopic{Name: "parent", ID: idA, Partitions: 3, VisibilityTimeoutMs: 30_000}
	f.commit(t, startTime, parent)
	f.commit(t, startTime, &meta.AttachChild{Parent: "parent", Child: "child", Epoch: "00000000000000e1"})
	if err := f.ctl.PlaceChanged(t.Context(), []ports.MetaChange{applied(parent)}); err != nil {
		t.Fatal(err)
	}
	p, c := f.owners(t, "parent"), f.owners(t, "child")
	for i := range int32(3) {
		if p[i] == "" || c[i] == "" || p[i] == c[i] {
			t.Fatalf("partition %d: parent on %q, child on %q", i, p[i], c[i])
		}
	}
}

// Ensure that Run places a topic created after its first pass within a
// moment, far sooner than its next 10 s pass.
func TestRunPlacesANewTopicWithoutWaitingForAPass(t *testing.T) {
	t.Parallel()
	store := fake.NewMetaStore()
	defer store.Close()
	join := meta.Envelope{AtMs: startTime.UnixMilli(), Event: &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"}}
	if _, err := store.Commit(join); err != nil {
		t.Fatal(err)
	}
	ctl := controller.New(controller.Deps{Store: store, Clock: fake.NewClock(startTime), Log: discard(), Self: "n1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	// The term's first pass runs at once; a topic whose placement that
	// pass made shows it ran.
	waitPlaced(t, store, "first", idA, 1)
	waitPlaced(t, store, "second", idB, 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// waitPlaced creates topic name with n partitions, then polls until all are
// placed, failing after 5 s (half the pass interval).
func waitPlaced(t *testing.T, store *fake.MetaStore, name, id string, n int32) {
	t.Helper()
	ev := &meta.CreateTopic{Name: name, ID: id, Partitions: n, VisibilityTimeoutMs: 30_000}
	if _, err := store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(), Event: ev}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := store.Assignments(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == int(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d partitions placed after 5 s", name, len(rows), n)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}

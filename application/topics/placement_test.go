package topics_test

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

func owners(t *testing.T, f *fixture, name string) map[int32]string {
	t.Helper()
	rows, err := f.store.Assignments(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]string{}
	for _, r := range rows {
		out[r.Partition] = r.Owner
	}
	return out
}

// Ensure that a new topic's partition p goes to the alive, non-draining
// member p mod n, members sorted by id (internals.md §8.7; api.md §5.6).
func TestPlacementRoundRobinOverAliveMembers(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n3", "n1", "n2", "n4", "n5")
	f.propose(t, &meta.MarkMemberDeadIf{ID: "n4", Heartbeat: startTime.Unix()})
	f.propose(t, &meta.SetMemberDraining{ID: "n5", Draining: true})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "spread", Partitions: 7})
	got := owners(t, f, "spread")
	want := []string{"n1", "n2", "n3", "n1", "n2", "n3", "n1"}
	for p, w := range want {
		if got[int32(p)] != w {
			t.Fatalf("partition %d on %q, want %q (all: %v)", p, got[int32(p)], w, got)
		}
	}
}

// Ensure that growing a topic places only the new partitions, keeping
// existing owners (conformance 52).
func TestPlacementOfGrownPartitions(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "grow"})
	before := owners(t, f, "grow")
	f.propose(t, &meta.MemberJoin{ID: "n0", Addr: "n0:7942", ClusterAddr: "n0:7943"})
	if _, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "grow", Partitions: ptr(int64(6))}); err != nil {
		t.Fatal(err)
	}
	after := owners(t, f, "grow")
	for p, o := range before {
		if after[p] != o {
			t.Fatalf("partition %d moved from %s to %s", p, o, after[p])
		}
	}
	want := map[int32]string{3: "n0", 4: "n1", 5: "n2"}
	for p, o := range want {
		if after[p] != o {
			t.Fatalf("new partition %d on %q, want %q (all %v)", p, after[p], o, after)
		}
	}
}

// Ensure that a follower, or a cluster without alive members, leaves the
// partitions unassigned and the create still succeeds (internals.md §8.7).
func TestPlacementSkipped(t *testing.T) {
	t.Parallel()
	follower := newFixture(t)
	follower.meta.SetLeader(false)
	follower.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	if got := owners(t, follower, "t"); len(got) != 0 {
		t.Fatalf("a follower placed partitions: %v", got)
	}
	empty := newFixture(t, []string{}...)
	empty.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
	if got := owners(t, empty, "t"); len(got) != 0 {
		t.Fatalf("placed without members: %v", got)
	}
	for _, st := range empty.describe(t, "t").Stats {
		if st.Status != topics.StatusOwnerUnavailable || st.OwnerLiveness != topics.LivenessUnassigned || st.OwnerNode != "" {
			t.Fatalf("unassigned partition: %v", st)
		}
	}
}

// Ensure that a failed barrier does not fail the create: the topic exists,
// unplaced, and the placement error is reported.
func TestPlacementBarrierFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.FailBarrier(meta.ErrUnavailable)
	got, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "t"})
	if err != nil || !errors.Is(got.PlacementErr, meta.ErrUnavailable) {
		t.Fatalf("create: %+v %v", got, err)
	}
	if o := owners(t, f, "t"); len(o) != 0 {
		t.Fatalf("placed after a failed barrier: %v", o)
	}
}

// Ensure that a create while every live member drains is refused with 503
// (api.md §2.5).
func TestCreateRefusedWhileEveryMemberDrains(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.propose(t, &meta.SetMemberDraining{ID: self, Draining: true})
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "t"})
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("got %v", err)
	}
}

// lockSpy is an assignment lock that records how often it was taken.
type lockSpy struct {
	sync.Mutex
	taken atomic.Int32
}

func (l *lockSpy) Lock() { l.Mutex.Lock(); l.taken.Add(1) }

// Ensure that a create places its partitions under the assignment lock it
// was given (the one the controller's sweep takes, internals §8.7), and
// not before that lock is free.
func TestCreatePlacesUnderTheSharedLock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	lock := &lockSpy{}
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, rand.Reader, serverDefaults, self, topics.WithPlacementLock(lock))
	if err != nil {
		t.Fatal(err)
	}
	lock.Lock() // the sweep is placing
	done := make(chan error, 1)
	go func() {
		_, err := svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "locked", Partitions: 3})
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok, err := f.store.Topic("locked"); err != nil || ok {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("create ended before the lock was free: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the topic never appeared")
		}
		time.Sleep(time.Millisecond) // polling with a deadline
	}
	if rows, _ := f.store.Assignments("locked"); len(rows) != 0 {
		t.Fatalf("placed %d partitions while the shared lock was held", len(rows))
	}
	lock.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rows, _ := f.store.Assignments("locked"); len(rows) != 3 || lock.taken.Load() != 2 {
		t.Fatalf("%d placed, lock taken %d times; want 3 and 2", len(rows), lock.taken.Load())
	}
}

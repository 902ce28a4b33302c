package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
)

const (
	idA = "00000000000000a1"
	idB = "00000000000000b2"
)

// Ensure that a follower's controller proposes nothing: no placement, no
// dead mark, no prune (internals §8.7 "leader only").
func TestNotLeaderDoesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.topic(t, "orders", idA, 3)
	f.commit(t, startTime, &meta.AssignPartition{Topic: "gone", Partition: 0, Owner: "n2"})
	f.store.SetLeader(false)
	for range 4 {
		f.clock.Advance(20 * time.Second)
		if err := f.ctl.Tick(context.Background()); !errors.Is(err, controller.ErrNotLeader) {
			t.Fatalf("tick on a follower: %v, want ErrNotLeader", err)
		}
		if err := f.ctl.CheckMembership(context.Background()); !errors.Is(err, controller.ErrNotLeader) {
			t.Fatalf("watch on a follower: %v, want ErrNotLeader", err)
		}
	}
	if n := len(events[meta.Event](f.store)); n != 0 {
		t.Fatalf("a follower proposed %d entries", n)
	}
}

// Ensure that a failed barrier skips the whole pass, and that the election
// grace only starts at the term's first successful barrier (internals §8.6
// "dead marking: leader + barrier", story F4).
func TestBarrierFailureSkipsPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.topic(t, "orders", idA, 3)
	f.store.FailBarrier(meta.ErrUnavailable)
	f.clock.Advance(40 * time.Second)
	if err := f.ctl.Tick(context.Background()); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("tick behind a failing barrier: %v", err)
	}
	if n := len(events[meta.Event](f.store)); n != 0 {
		t.Fatalf("%d entries proposed behind a failed barrier", n)
	}
	f.store.FailBarrier(nil)
	f.heartbeat(t, "n2")
	f.tick(t) // the term starts now: n3 is 40 s silent but the grace runs
	if got := f.status(t, "n3"); got != meta.StatusAlive {
		t.Fatalf("n3 is %s right after the term's first barrier", got)
	}
	if len(f.owners(t, "orders")) != 3 {
		t.Fatalf("the pass after the barrier healed placed %v", f.owners(t, "orders"))
	}
}

// Ensure that a new leader whose replica lags applies the log before it
// plans: an owner committed by the previous leader is never replaced
// (story F22), and a barrier that cannot complete skips the pass.
func TestLaggingLeaderNeverReassigns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	f.topic(t, "orders", idA, 3)
	f.store.HoldApply()
	if _, err := f.store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(),
		Event: &meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: idA, Partition: 0, Owner: "n3"}}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.ctl.Tick(cancelled); err == nil {
		t.Fatal("a pass ran on a replica that could not catch up")
	}
	if n := len(events[meta.Event](f.store)); n != 0 {
		t.Fatalf("%d entries proposed before the barrier passed", n)
	}
	done := make(chan error, 1)
	go func() { done <- f.ctl.Tick(context.Background()) }()
	if err := f.store.ReleaseApply(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.owners(t, "orders"); got[0] != "n3" || len(got) != 3 {
		t.Fatalf("owners after the lagging leader's pass: %v (partition 0 must stay on n3)", got)
	}
	for _, e := range events[*meta.AssignPartitionIfAbsent](f.store) {
		if e.Partition == 0 {
			t.Fatalf("the leader proposed an owner for the owned partition 0: %+v", e)
		}
	}
}

// Ensure that Run passes at once while leading and stops when its context
// ends.
func TestRunPlacesAndStops(t *testing.T) {
	t.Parallel()
	store := fake.NewMetaStore()
	defer store.Close()
	if _, err := store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(), Event: &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(), Event: &meta.CreateTopic{Name: "t", ID: idA, Partitions: 2, VisibilityTimeoutMs: 30_000}}); err != nil {
		t.Fatal(err)
	}
	ctl := controller.New(controller.Deps{Store: store, Clock: fake.NewClock(startTime), Log: discard(), Self: "n1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows, err := store.Assignments("t")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Run placed %d of 2 partitions", len(rows))
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// Ensure that construction rejects missing dependencies.
func TestNewRejectsNilDependencies(t *testing.T) {
	t.Parallel()
	store, clock := fake.NewMetaStore(), fake.NewClock(startTime)
	defer store.Close()
	for name, d := range map[string]controller.Deps{
		"store": {Clock: clock, Log: discard(), Self: "n1"},
		"clock": {Store: store, Log: discard(), Self: "n1"},
		"log":   {Store: store, Clock: clock, Self: "n1"},
		"self":  {Store: store, Clock: clock, Log: discard()},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("New without %s did not panic", name)
				}
			}()
			controller.New(d)
		})
	}
}

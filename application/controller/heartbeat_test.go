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

func newHeartbeater(store controller.HeartbeatStore, clock *fake.Clock) *controller.Heartbeater {
	return controller.NewHeartbeater(controller.HeartbeatConfig{
		Store: store, Clock: clock, Log: discard(),
		ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943", Build: "v-test", EntryTypes: meta.AppliesThroughType,
	})
}

func member(t *testing.T, store *fake.MetaStore, id string) meta.Member {
	t.Helper()
	members, err := store.Members()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("no member record for %s", id)
	return meta.Member{}
}

// Ensure that the first beat registers the node, and that later beats are
// heartbeats stamped by the clock carrying the build report (internals
// §8.3, §9.4).
func TestHeartbeatRegistersThenBeats(t *testing.T) {
	t.Parallel()
	store := &recorder{MetaStore: fake.NewMetaStore()}
	defer store.Close()
	clock := fake.NewClock(startTime)
	h := newHeartbeater(store, clock)
	for i := range 3 {
		if err := h.Beat(t.Context()); err != nil {
			t.Fatalf("beat %d: %v", i, err)
		}
		m := member(t, store.MetaStore, "n2")
		if m.LastHeartbeat != clock.Now().Unix() || m.Status != meta.StatusAlive || m.Build != "v-test" || m.EntryTypes != meta.AppliesThroughType {
			t.Fatalf("beat %d: record %+v", i, m)
		}
		clock.Advance(5 * time.Second)
	}
	if joins, beats := len(events[*meta.MemberJoin](store)), len(events[*meta.MemberHeartbeat](store)); joins != 1 || beats != 2 {
		t.Fatalf("%d registrations and %d heartbeats, want 1 and 2", joins, beats)
	}
}

// Ensure that a dead-marked node's next beat re-registers it, which revives
// it and keeps its drain mark (internals §9.4).
func TestHeartbeatRevivesDeadRecord(t *testing.T) {
	t.Parallel()
	store := fake.NewMetaStore()
	defer store.Close()
	clock := fake.NewClock(startTime)
	h := newHeartbeater(store, clock)
	if err := h.Beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []meta.Event{&meta.SetMemberDraining{ID: "n2", Draining: true}, &meta.MarkMemberDeadIf{ID: "n2", Heartbeat: startTime.Unix()}} {
		if _, err := store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(), Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(40 * time.Second)
	if err := h.Beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m := member(t, store, "n2"); m.Status != meta.StatusAlive || !m.Draining || m.LastHeartbeat != clock.Now().Unix() {
		t.Fatalf("after the beat: %+v, want alive, draining, stamped now", m)
	}
}

// Ensure that a decommissioned (tombstoned) node is told so.
func TestHeartbeatDecommissioned(t *testing.T) {
	t.Parallel()
	store := fake.NewMetaStore()
	defer store.Close()
	h := newHeartbeater(store, fake.NewClock(startTime))
	if err := h.Beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Commit(meta.Envelope{AtMs: startTime.UnixMilli(), Event: &meta.RemoveMember{ID: "n2"}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Beat(t.Context()); !errors.Is(err, controller.ErrDecommissioned) {
		t.Fatalf("beat of a tombstoned node: %v, want ErrDecommissioned", err)
	}
}

// Ensure that Run registers at once, retries a failed registration within
// 250 ms rather than 5 s, then heartbeats every 5 s, and stops when its
// context ends (internals §8.7 "Forming cluster", §9.4).
func TestHeartbeatRunCadence(t *testing.T) {
	t.Parallel()
	store := &recorder{MetaStore: fake.NewMetaStore()}
	defer store.Close()
	store.FailPropose(meta.ErrUnavailable)
	h := newHeartbeater(store, fake.NewClock(startTime))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	waitFor(t, 2*time.Second, "a first registration attempt", func() bool { return len(events[meta.Event](store)) >= 1 })
	store.FailPropose(nil)
	waitFor(t, 2*time.Second, "the registration retry", func() bool { return len(events[*meta.MemberJoin](store)) >= 2 })
	registered := time.Now()
	waitFor(t, 8*time.Second, "the first heartbeat", func() bool { return len(events[*meta.MemberHeartbeat](store)) >= 1 })
	if gap := time.Since(registered); gap < 4*time.Second {
		t.Fatalf("first heartbeat %s after registration, want about 5 s", gap)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, within)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}

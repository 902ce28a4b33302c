package fanout_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain/meta"
)

// countingStore counts the whole-view reads a full pass makes; while
// failing names a topic, reading that topic fails.
type countingStore struct {
	*fake.MetaStore
	links, lists atomic.Int64
	failing      atomic.Pointer[string]
}

var errTopicRead = errors.New("test: topic read fails")

func (s *countingStore) Topic(name string) (meta.Topic, bool, error) {
	if f := s.failing.Load(); f != nil && *f == name {
		return meta.Topic{}, false, errTopicRead
	}
	return s.MetaStore.Topic(name)
}

// ListTopics is counted: the orphan sweep lists every topic.
func (s *countingStore) ListTopics(after string, limit int) ([]meta.Topic, error) {
	s.lists.Add(1)
	return s.MetaStore.ListTopics(after, limit)
}

func (s *countingStore) Links() ([]meta.Link, error) {
	s.links.Add(1)
	return s.MetaStore.Links()
}

// tickingEngine is an engine driven tick by tick over e's fakes, with its
// store's Links reads counted. Its cursors stop at the end of the test.
func tickingEngine(t *testing.T, e *env) (*fanout.Engine, *countingStore) {
	t.Helper()
	store := &countingStore{MetaStore: e.store}
	eng := fanout.New(fanout.Deps{
		Store: store, Logs: e.reads, Cursors: e.cursors, Local: e.local, Peers: e.peers,
		Latch: leaderconfirm.NewLatch(e.store), Confirmer: leaderconfirm.New(e.store), Clock: e.clock,
		Metrics: e.metrics, Log: slog.New(e.logged), Self: self,
	}, e.opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = eng.Run(ctx) // one last tick, then every cursor stops
	})
	return eng, store
}

// internals §6.1: a tick whose views have not moved skips the comparison
// that decodes every topic, so an idle node's reconciler costs nothing in
// proportion to its topics; a heartbeat does not count, a topic change
// does, and 30 s bound the skipping.
func TestReconcileSkipsWhileNothingMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.propose(t, &meta.MemberJoin{ID: self, Addr: "n1:7942", ClusterAddr: "n1:7943"})
	e.topic(t, "orders", 1, 3)
	eng, store := tickingEngine(t, e)
	ctx := context.Background()
	passes := func() int64 { return store.links.Load() }

	eng.Reconcile(ctx)
	if passes() != 1 {
		t.Fatalf("first tick: %d full passes, want 1", passes())
	}
	for range 5 {
		eng.Reconcile(ctx)
	}
	e.propose(t, &meta.MemberHeartbeat{ID: self})
	eng.Reconcile(ctx)
	if passes() != 1 {
		t.Fatalf("idle ticks and a heartbeat ran %d full passes, want none after the first", passes()-1)
	}
	e.topic(t, "audit", 2, 1)
	eng.Reconcile(ctx)
	if passes() != 2 {
		t.Fatalf("a new topic ran %d full passes, want 1", passes()-1)
	}
	e.clock.Advance(30 * time.Second)
	eng.Reconcile(ctx)
	if passes() != 3 {
		t.Fatalf("30 s without a change ran %d full passes, want 1", passes()-2)
	}
}

// internals §6.1: a cursor that exits, and a replica that falls behind and
// catches up again, each call for a full pass although no view moved.
func TestReconcileRunsAfterAnExitAndAfterCatchingUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 1)
	e.topic(t, "audit", 2, 1)
	e.attach(t, "orders", "audit", topicID(90), 0, 0)
	eng, store := tickingEngine(t, e)
	ctx := context.Background()
	eng.Reconcile(ctx)
	if _, ok := eng.Cursor("orders", 0, "audit"); !ok || store.links.Load() != 1 {
		t.Fatalf("first tick: cursor running %v, %d passes", ok, store.links.Load())
	}
	e.store.SetCaughtUp(false)
	eng.Reconcile(ctx)
	e.store.SetCaughtUp(true)
	eng.Reconcile(ctx)
	if store.links.Load() != 2 {
		t.Fatalf("catching up again ran %d full passes, want 1", store.links.Load()-1)
	}
	// The cursor stops by itself (its re-read of the link fails) while
	// no view moves.
	child := "audit"
	store.failing.Store(&child)
	eventually(t, "the cursor to exit", func() bool { _, ok := eng.Cursor("orders", 0, "audit"); return !ok })
	store.failing.Store(nil)
	before := store.links.Load()
	eng.Reconcile(ctx)
	if store.links.Load() != before+1 {
		t.Fatalf("a cursor exit ran %d full passes, want 1", store.links.Load()-before)
	}
	if _, ok := eng.Cursor("orders", 0, "audit"); !ok {
		t.Fatal("the pass after the exit did not start the cursor again")
	}
}

// ensure that the orphan cursor-file sweep (a directory listing per owned
// partition) runs on the first caught-up tick and on a later sweep tick
// only when something moved since the last clean sweep.
func TestOrphanSweepRunsOnlyWhenSomethingMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.topic(t, "orders", 1, 3)
	eng, store := tickingEngine(t, e)
	ctx := context.Background()
	ticks := func(n int) {
		for range n {
			eng.Reconcile(ctx)
		}
	}
	ticks(1)
	if store.lists.Load() != 1 {
		t.Fatalf("first tick: %d sweeps, want 1", store.lists.Load())
	}
	ticks(30) // the 31st caught-up tick is a sweep tick
	if store.lists.Load() != 1 {
		t.Fatalf("a sweep tick with nothing moved swept (%d sweeps)", store.lists.Load())
	}
	e.topic(t, "audit", 2, 1)
	ticks(30) // through the 61st tick
	if store.lists.Load() != 2 {
		t.Fatalf("a sweep tick after a new topic: %d sweeps, want 2", store.lists.Load())
	}
}

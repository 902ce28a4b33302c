package controller_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// self is the node the controller under test runs on.
const self = "n1"

var startTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// recorder is the fake metastore with every proposal recorded and an
// optional hook run before each one reaches the store.
type recorder struct {
	*fake.MetaStore
	mu       sync.Mutex
	proposed []meta.Envelope
	before   func(meta.Envelope)
	scans    int // whole-view reads: ListTopics and AllAssignments calls
}

func (r *recorder) ListTopics(after string, limit int) ([]meta.Topic, error) {
	r.counted()
	return r.MetaStore.ListTopics(after, limit)
}

func (r *recorder) AllAssignments() ([]meta.Assignment, error) {
	r.counted()
	return r.MetaStore.AllAssignments()
}

func (r *recorder) counted() {
	r.mu.Lock()
	r.scans++
	r.mu.Unlock()
}

// scanned returns the whole-view reads so far.
func (r *recorder) scanned() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scans
}

func (r *recorder) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	r.mu.Lock()
	r.proposed = append(r.proposed, env)
	hook := r.before
	r.mu.Unlock()
	if hook != nil {
		hook(env)
	}
	return r.MetaStore.Propose(ctx, env)
}

// events returns the proposed events of type T.
func events[T meta.Event](r *recorder) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []T
	for _, env := range r.proposed {
		if e, ok := env.Event.(T); ok {
			out = append(out, e)
		}
	}
	return out
}

type fixture struct {
	store *recorder
	clock *fake.Clock
	ctl   *controller.Controller
}

// newFixture builds a leading controller on n1 over a fake replica where
// every member in ids registered at startTime.
func newFixture(t *testing.T, ids ...string) *fixture {
	t.Helper()
	f := &fixture{store: &recorder{MetaStore: fake.NewMetaStore()}, clock: fake.NewClock(startTime)}
	t.Cleanup(f.store.Close)
	for _, id := range ids {
		f.commit(t, startTime, &meta.MemberJoin{ID: id, Addr: id + ":7942", ClusterAddr: id + ":7943"})
	}
	f.ctl = controller.New(controller.Deps{Store: f.store, Clock: f.clock, Log: discard(), Self: self})
	return f
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// commit applies ev as another node's entry stamped at.
func (f *fixture) commit(t *testing.T, at time.Time, ev meta.Event) {
	t.Helper()
	if _, err := f.store.Commit(meta.Envelope{AtMs: at.UnixMilli(), Event: ev}); err != nil {
		t.Fatal(err)
	}
}

// topic creates name with n partitions and incarnation id.
func (f *fixture) topic(t *testing.T, name, id string, n int32) {
	t.Helper()
	f.commit(t, startTime, &meta.CreateTopic{Name: name, ID: id, Partitions: n, VisibilityTimeoutMs: 30_000})
}

// heartbeat stamps member id's heartbeat at the fake clock's time.
func (f *fixture) heartbeat(t *testing.T, id string) {
	t.Helper()
	f.commit(t, f.clock.Now(), &meta.MemberHeartbeat{ID: id})
}

// tick runs one pass and fails on any error.
func (f *fixture) tick(t *testing.T) {
	t.Helper()
	if err := f.ctl.Tick(context.Background()); err != nil {
		t.Fatalf("tick: %v", err)
	}
}

// voters makes ids the Raft voters.
func (f *fixture) voters(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := f.store.AddVoter(context.Background(), meta.ReplicaID(id), id+":7943"); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) owners(t *testing.T, topic string) map[int32]string {
	t.Helper()
	rows, err := f.store.Assignments(topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]string{}
	for _, r := range rows {
		out[r.Partition] = r.Owner
	}
	return out
}

func (f *fixture) status(t *testing.T, id string) string {
	t.Helper()
	members, err := f.store.Members()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m.ID == id {
			return m.Status
		}
	}
	return "absent"
}

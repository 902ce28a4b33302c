package orphans_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/orphans"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// waitFor bounds every wait on the purger, which never sleeps on its own
// when told to retry every millisecond.
const waitFor = 5 * time.Second

// purgeEnv is one node: its replica, its disk (directories and partition
// logs) and a running purger, with a signal at each step a test waits on.
type purgeEnv struct {
	t          *testing.T
	store      *fake.MetaStore
	dirs       *signalDirs
	logs       *recordingLogs
	confirm    *signalConfirm
	subscribed chan struct{}
}

func newPurgeEnv(t *testing.T, dirs ...ports.TopicDir) *purgeEnv {
	t.Helper()
	store := fake.NewMetaStore()
	return &purgeEnv{
		t: t, store: store,
		dirs:       &signalDirs{fd: fake.NewTopicDirs(dirs...), reclaimed: make(chan string, 16)},
		logs:       &recordingLogs{PartitionLogs: fake.NewPartitionLogs()},
		confirm:    &signalConfirm{c: leaderconfirm.New(store), seen: make(chan leaderconfirm.Decision, 64)},
		subscribed: make(chan struct{}, 16),
	}
}

// run starts the purger over w (the replica itself when nil) and waits
// until it has subscribed; the test's cleanup stops it.
func (e *purgeEnv) run(w ports.MetadataWatcher) {
	e.t.Helper()
	if w == nil {
		w = e.store
	}
	store := &signalStore{MetaStore: e.store, w: w, subscribed: e.subscribed}
	p := orphans.NewPurger(store, e.dirs, e.logs, e.confirm, slog.New(slog.NewTextHandler(io.Discard, nil)),
		orphans.RetryEvery(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("purger: %v", err)
		}
	})
	e.waitSubscribed()
}

func (e *purgeEnv) waitSubscribed() {
	e.t.Helper()
	select {
	case <-e.subscribed:
	case <-time.After(waitFor):
		e.t.Fatal("the purger never subscribed")
	}
}

// commit applies ev as if another node had proposed it.
func (e *purgeEnv) commit(ev meta.Event) {
	e.t.Helper()
	if _, err := e.store.Commit(meta.Envelope{AtMs: 1, Event: ev}); err != nil {
		e.t.Fatal(err)
	}
}

// create commits a topic incarnation and writes one record to each of its
// partitions on this node.
func (e *purgeEnv) create(name, id string, partitions int32) {
	e.t.Helper()
	e.commit(&meta.CreateTopic{Name: name, ID: id, Partitions: partitions, VisibilityTimeoutMs: 30_000})
	for p := range partitions {
		if _, err := e.logs.CommitDurable(context.Background(), refOf(name, id, p), []domain.Record{{Payload: []byte("m")}}); err != nil {
			e.t.Fatal(err)
		}
	}
}

func refOf(name, id string, p int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: name, TopicID: domain.TopicID(id), Partition: p}
}

// hwm is the partition's high watermark on this node.
func (e *purgeEnv) hwm(name, id string, p int32) int64 {
	e.t.Helper()
	st, err := e.logs.LogStats(refOf(name, id, p))
	if err != nil {
		e.t.Fatal(err)
	}
	return st.HighWatermark
}

// waitReclaimed waits until the purger reclaimed the directory named dir.
func (e *purgeEnv) waitReclaimed(dir string) {
	e.t.Helper()
	for {
		select {
		case got := <-e.dirs.reclaimed:
			if got == dir {
				return
			}
		case <-time.After(waitFor):
			e.t.Fatalf("%s not reclaimed; left %v", dir, e.dirs.Names())
		}
	}
}

// waitDecision waits for the purger's next leader confirmation.
func (e *purgeEnv) waitDecision() leaderconfirm.Decision {
	e.t.Helper()
	select {
	case d := <-e.confirm.seen:
		return d
	case <-time.After(waitFor):
		e.t.Fatal("the purger asked the leader nothing")
		return leaderconfirm.Decision{}
	}
}

// signalStore is the replica with a signal at each subscription, watched
// through w.
type signalStore struct {
	*fake.MetaStore
	w          ports.MetadataWatcher
	subscribed chan struct{}
	armed      atomic.Bool
}

// Watch subscribes; the signal waits for the read of the live topics that
// follows (the purger's reseed), so a test that writes after it knows the
// purger has seen every topic created before.
func (s *signalStore) Watch(buffer int) (ports.MetaSubscription, error) {
	sub, err := s.w.Watch(buffer)
	if err == nil {
		s.armed.Store(true)
	}
	return sub, err
}

func (s *signalStore) ListTopics(after string, limit int) ([]meta.Topic, error) {
	topics, err := s.MetaStore.ListTopics(after, limit)
	if s.armed.CompareAndSwap(true, false) {
		s.subscribed <- struct{}{}
	}
	return topics, err
}

// signalDirs is the node's topic directories: it signals each one it
// reclaimed, and a test can replace them all (what an open of a recreated
// topic does to the disk).
type signalDirs struct {
	mu        sync.Mutex
	fd        *fake.TopicDirs
	reclaimed chan string
}

func (d *signalDirs) cur() *fake.TopicDirs {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fd
}

// replace makes dirs the node's directories.
func (d *signalDirs) replace(dirs ...ports.TopicDir) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fd = fake.NewTopicDirs(dirs...)
}

func (d *signalDirs) TopicDirs() ([]ports.TopicDir, error) { return d.cur().TopicDirs() }

func (d *signalDirs) Names() []string { return d.cur().Names() }

func (d *signalDirs) ReclaimTopicDir(td ports.TopicDir) error {
	err := d.cur().ReclaimTopicDir(td)
	if err == nil {
		d.reclaimed <- td.Dir
	}
	return err
}

// recordingLogs records every partition removed.
type recordingLogs struct {
	*fake.PartitionLogs
	mu      sync.Mutex
	removed []domain.PartitionRef
}

func (l *recordingLogs) Remove(ref domain.PartitionRef) error {
	l.mu.Lock()
	l.removed = append(l.removed, ref)
	l.mu.Unlock()
	return l.PartitionLogs.Remove(ref)
}

func (l *recordingLogs) removedOf(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ref := range l.removed {
		if ref.TopicID == domain.TopicID(id) {
			n++
		}
	}
	return n
}

// signalConfirm hands each leader confirmation to the test.
type signalConfirm struct {
	c    *leaderconfirm.Confirmer
	seen chan leaderconfirm.Decision
}

func (s *signalConfirm) TopicGone(ctx context.Context, name string, id domain.TopicID) leaderconfirm.Decision {
	d := s.c.TopicGone(ctx, name, id)
	select {
	case s.seen <- d:
	default: // a test reading none of the retries' decisions
	}
	return d
}

// ctlWatcher hands out subscriptions the test feeds and ends.
type ctlWatcher struct{ subs chan *ctlSub }

func newCtlWatcher() *ctlWatcher { return &ctlWatcher{subs: make(chan *ctlSub, 4)} }

func (w *ctlWatcher) Watch(int) (ports.MetaSubscription, error) {
	s := &ctlSub{ch: make(chan ports.MetaChange, 4)}
	w.subs <- s
	return s, nil
}

// next is the subscription the purger took last.
func (w *ctlWatcher) next(t *testing.T) *ctlSub {
	t.Helper()
	select {
	case s := <-w.subs:
		return s
	case <-time.After(waitFor):
		t.Fatal("no subscription")
		return nil
	}
}

type ctlSub struct {
	ch   chan ports.MetaChange
	mu   sync.Mutex
	err  error
	done bool
}

func (s *ctlSub) C() <-chan ports.MetaChange { return s.ch }

func (s *ctlSub) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *ctlSub) Close() { s.end(nil) }

// end closes the subscription with err, as the store does when the
// subscriber lagged.
func (s *ctlSub) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.done, s.err = true, err
		close(s.ch)
	}
}

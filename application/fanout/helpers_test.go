package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const (
	self  = "n1"
	other = "n2"
)

// env is one node's fan-out engine over fakes: its own partitions commit
// into logs, other nodes' through peers.
type env struct {
	store   *fake.MetaStore
	logs    *fake.PartitionLogs
	reads   *countingReader
	cursors *fake.FanoutCursors
	peers   *flakyPeers
	clock   *fake.Clock
	metrics *recMetrics
	logged  *recLog
	local   *produce.Committer
	opts    fanout.Options
	markers markers

	engine *fanout.Engine
	stop   func()
}

func newEnv(t *testing.T) *env {
	t.Helper()
	store := fake.NewMetaStore()
	t.Cleanup(store.Close)
	e := &env{
		store: store, logs: fake.NewPartitionLogs(), cursors: fake.NewFanoutCursors(),
		peers: &flakyPeers{PeerCommitter: fake.NewPeerCommitter(), down: map[string]bool{}},
		clock: fake.NewClock(time.Unix(1_700_000_000, 0)), metrics: &recMetrics{counts: map[string]int64{}}, logged: &recLog{},
		opts: fanout.Options{
			ReconcileInterval: 5 * time.Millisecond, LongPoll: 20 * time.Millisecond, RetryBackoff: 5 * time.Millisecond,
			Linger: time.Millisecond, DelaySleepMax: 5 * time.Millisecond,
		},
	}
	e.reads = &countingReader{PartitionReader: e.logs}
	e.local = produce.NewCommitter(produce.CommitterDeps{Store: store, Logs: e.logs, Latch: leaderconfirm.NewLatch(store),
		Clock: e.clock, Metrics: &fake.Metrics{}, Self: self})
	t.Cleanup(func() {
		if e.stop != nil {
			e.stop()
		}
	})
	return e
}

// start runs a fresh engine (a restarted process) until stopEngine or the
// end of the test.
func (e *env) start(t *testing.T) {
	t.Helper()
	if e.stop != nil {
		t.Fatal("engine already running")
	}
	e.engine = e.build()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.engine.Run(ctx) }()
	e.stop = func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine: %v", err)
		}
		e.stop = nil
	}
}

// build returns a fresh engine over e's fakes, not running.
func (e *env) build() *fanout.Engine {
	return fanout.New(fanout.Deps{
		Store: e.store, Logs: e.reads, Cursors: e.cursors, Local: e.local, Peers: e.peers,
		Latch: leaderconfirm.NewLatch(e.store), Confirmer: leaderconfirm.New(e.store), Clock: e.clock,
		Metrics: e.metrics, Log: slog.New(e.logged), Self: self, Markers: e.markers,
	}, e.opts)
}

func (e *env) stopEngine() { e.stop() }

func topicID(n int) string { return fmt.Sprintf("%016x", n) }

func (e *env) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	got, err := e.store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1, Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("%s: %+v %v", ev.Type(), got, err)
	}
}

// topic creates name as incarnation n and places partition p on owners[p]
// (self when owners is short).
func (e *env) topic(t *testing.T, name string, n int, partitions int32, owners ...string) {
	t.Helper()
	e.propose(t, &meta.CreateTopic{Name: name, ID: topicID(n), Partitions: partitions, VisibilityTimeoutMs: 30_000})
	e.place(t, name, 0, owners...)
}

// place assigns name's partitions from first on, to owners[p] or self.
func (e *env) place(t *testing.T, name string, first int32, owners ...string) {
	t.Helper()
	tp, _, _ := e.store.Topic(name)
	for p := first; p < tp.Partitions; p++ {
		owner := self
		if int(p) < len(owners) {
			owner = owners[p]
		}
		e.propose(t, &meta.AssignPartitionIfAbsent{Topic: name, TopicID: tp.ID, Partition: p, Owner: owner})
	}
}

func (e *env) attach(t *testing.T, parent, child, epoch string, delayMs int64, offsets ...int64) {
	t.Helper()
	e.propose(t, &meta.AttachChild{Parent: parent, Child: child, Epoch: epoch, DelayMs: delayMs, Offsets: offsets})
}

func (e *env) ref(t *testing.T, topic string, p int32) domain.PartitionRef {
	t.Helper()
	tp, ok, err := e.store.Topic(topic)
	if err != nil || !ok {
		t.Fatalf("topic %s: %v %v", topic, ok, err)
	}
	return domain.PartitionRef{Topic: topic, TopicID: domain.TopicID(tp.ID), Partition: p}
}

// produce commits records to the parent's partition p as its owner would,
// stamped with the fake clock; "key=payload" or a bare payload (keyless).
func (e *env) produce(t *testing.T, topic string, p int32, recs ...string) {
	t.Helper()
	now := e.clock.Now().UnixMilli()
	batch := make([]domain.Record, len(recs))
	for i, r := range recs {
		key, payload, keyed := strings.Cut(r, "=")
		if !keyed {
			key, payload = "", r
		}
		batch[i] = domain.Record{Key: []byte(key), Payload: []byte(payload), CommittedAtMs: now}
	}
	if _, err := e.logs.CommitDurable(context.Background(), e.ref(t, topic, p), batch); err != nil {
		t.Fatal(err)
	}
}

// records reads every record of a partition in logs as "key=payload" (a
// bare payload when keyless).
func (e *env) records(t *testing.T, topic string, p int32) []string {
	t.Helper()
	recs, err := e.logs.Read(context.Background(), e.ref(t, topic, p), 0, 1<<20, 0)
	if errors.Is(err, domain.ErrOffsetNotWritten) {
		return nil
	}
	if err != nil {
		t.Fatalf("read %s/%d: %v", topic, p, err)
	}
	return render(recs)
}

// remote lists what peers committed to topic's partition p on node.
func (e *env) remote(topic string, p int32, node string) []string {
	var out []string
	for _, c := range e.peers.Commits() {
		if c.Node == node && c.Req.Topic == topic && c.Req.Partition == p {
			out = append(out, render(c.Req.Records)...)
		}
	}
	return out
}

func render(recs []domain.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
		if len(r.Key) > 0 {
			out[i] = string(r.Key) + "=" + out[i]
		}
	}
	return out
}

func (e *env) cursorAt(t *testing.T, parent string, p int32, child string) (ports.FanoutCursor, bool) {
	t.Helper()
	return e.cursors.Get(e.ref(t, parent, p), child)
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond) // polling another goroutine's progress with a deadline
	}
}

func equal(got []string, want ...string) bool { return slices.Equal(got, want) }

// flakyPeers fails every commit to the nodes marked down.
type flakyPeers struct {
	*fake.PeerCommitter
	mu       sync.Mutex
	down     map[string]bool
	failures int
}

func (p *flakyPeers) setDown(node string, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down[node] = down
}

func (p *flakyPeers) failed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failures
}

func (p *flakyPeers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	p.mu.Lock()
	if p.down[node] {
		p.failures++
		p.mu.Unlock()
		return 0, fake.ErrFakePeerFailure
	}
	p.mu.Unlock()
	return p.PeerCommitter.CommitBatch(ctx, node, req)
}

// countingReader counts slab reads, so a test can tell a cursor looked
// again without sleeping.
type countingReader struct {
	ports.PartitionReader
	mu     sync.Mutex
	n      int
	bounds int
	onRead func() // runs once, after the first read, before it returns
}

func (r *countingReader) Bounds(ref domain.PartitionRef) (ports.LogBounds, error) {
	r.mu.Lock()
	r.bounds++
	r.mu.Unlock()
	return r.PartitionReader.Bounds(ref)
}

func (r *countingReader) peeks() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bounds
}

func (r *countingReader) Read(ctx context.Context, ref domain.PartitionRef, from int64, maxRecords, maxBytes int) ([]domain.Record, error) {
	r.mu.Lock()
	r.n++
	hook := r.onRead
	r.onRead = nil
	r.mu.Unlock()
	recs, err := r.PartitionReader.Read(ctx, ref, from, maxRecords, maxBytes)
	if hook != nil {
		hook()
	}
	return recs, err
}

func (r *countingReader) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// recMetrics records the engine's metrics as "copied parent/child" etc.
type recMetrics struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (m *recMetrics) add(k string, n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[k] += n
}

func (m *recMetrics) get(k string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.counts[k]
}

func (m *recMetrics) Copied(parent, child string, n int) { m.add("copied "+parent+"/"+child, int64(n)) }
func (m *recMetrics) Dropped(parent, child string, n int64) {
	m.add("dropped "+parent+"/"+child, n)
}
func (m *recMetrics) Batch(records, bytes int) {
	m.add("batches", 1)
	m.add("batch_records", int64(records))
	m.add("batch_bytes", int64(bytes))
}

// recLog is a slog handler keeping every message.
type recLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *recLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *recLog) WithGroup(string) slog.Handler      { return l }

func (l *recLog) saw(msg string) bool { return l.times(msg) > 0 }

func (l *recLog) times(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

// markers are the move.marker files of the partitions that moved here, by
// partition reference.
type markers map[domain.PartitionRef]ports.MoveMarker

func (m markers) MoveMarker(ref domain.PartitionRef) (ports.MoveMarker, bool, error) {
	mk, ok := m[ref]
	return mk, ok, nil
}

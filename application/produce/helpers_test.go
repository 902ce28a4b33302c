package produce_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const self = "n1"

// env is one node's produce path over fakes.
type env struct {
	store     *countingStore
	wal       *fake.WAL
	turns     *turnCountingWAL // e.wal as dispatchers built by e.dispatcher see it
	logs      *fake.PartitionLogs
	sched     *fake.Schedule
	peers     *fake.PeerCommitter
	remote    *slowPeers // e.peers as dispatchers built by e.dispatcher see it
	clock     *fake.Clock
	metrics   *fake.Metrics
	schemas   *fake.SchemaValidator
	svc       *produce.Service
	latch     *leaderconfirm.Latch
	committer *recordingCommitter
	owner     *produce.Committer  // the committer under e.committer
	running   *produce.Dispatcher // the dispatcher e.run started last
	// measured: owners whose latency window e.run fills, before the
	// dispatcher starts, with commits that each took this long.
	measured map[string]time.Duration
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ms := fake.NewMetaStore()
	t.Cleanup(ms.Close)
	e := &env{
		store: &countingStore{MetaStore: ms}, wal: fake.NewWAL(), logs: fake.NewPartitionLogs(),
		peers: fake.NewPeerCommitter(), clock: fake.NewClock(time.Unix(1_700_000_000, 0)),
		metrics: &fake.Metrics{}, schemas: fake.NewSchemaValidator(),
	}
	e.sched = &fake.Schedule{Logs: e.logs}
	e.turns = &turnCountingWAL{DispatchWAL: e.wal}
	e.remote = &slowPeers{PeerCommitter: e.peers, clock: e.clock}
	e.svc = produce.NewService(produce.ServiceDeps{Topics: e.store, WAL: e.wal, Schemas: e.schemas, Clock: e.clock, Metrics: e.metrics})
	e.latch = leaderconfirm.NewLatch(e.store)
	inner := produce.NewCommitter(produce.CommitterDeps{Store: e.store, Logs: e.logs, Schedule: e.sched, Latch: e.latch, Clock: e.clock, Metrics: e.metrics, Self: self})
	e.committer = &recordingCommitter{inner: inner, clock: e.clock}
	e.owner = inner
	return e
}

func topicID(n int) string { return fmt.Sprintf("%016x", n) }

func (e *env) propose(t testing.TB, ev meta.Event) {
	t.Helper()
	got, err := e.store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1, Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("%s: %+v %v", ev.Type(), got, err)
	}
}

// createTopic creates name as incarnation n with the given partitions.
func (e *env) createTopic(t testing.TB, name string, n int, partitions int32) domain.TopicID {
	t.Helper()
	e.propose(t, &meta.CreateTopic{Name: name, ID: topicID(n), Partitions: partitions, VisibilityTimeoutMs: 30_000})
	return domain.TopicID(topicID(n))
}

// assign places every partition of name on owner.
func (e *env) assign(t testing.TB, name, owner string, partitions ...int32) {
	t.Helper()
	tp, ok, err := e.store.Topic(name)
	if err != nil || !ok {
		t.Fatalf("assign %s: %v %v", name, ok, err)
	}
	if len(partitions) == 0 {
		for p := range tp.Partitions {
			partitions = append(partitions, p)
		}
	}
	for _, p := range partitions {
		e.propose(t, &meta.AssignPartitionIfAbsent{Topic: name, TopicID: tp.ID, Partition: p, Owner: owner})
	}
}

func (e *env) deleteTopic(t *testing.T, name string, id domain.TopicID) {
	t.Helper()
	e.propose(t, &meta.DeleteTopicIf{Name: name, ID: string(id)})
}

// produce accepts one message and fails the test on a refusal.
func (e *env) produce(t *testing.T, topic, key, payload string, pin ...int32) {
	t.Helper()
	r := produce.Request{Topic: topic, Key: []byte(key), Payload: []byte(payload)}
	if len(pin) > 0 {
		r.Partition = &pin[0]
	}
	if err := e.svc.Accept(context.Background(), r); err != nil {
		t.Fatalf("produce %q to %s: %v", payload, topic, err)
	}
}

// dispatcher builds a dispatcher over env's fakes.
func (e *env) dispatcher() *produce.Dispatcher {
	return produce.NewDispatcher(produce.DispatcherDeps{
		WAL: e.turns, Store: e.store, Latch: e.latch, Confirmer: leaderconfirm.New(e.store),
		Local: e.committer, Peers: e.remote, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Self: self,
	})
}

// turnCountingWAL counts the dispatcher loop's turns: each asks for the
// durable-next channel once, just before its pass.
type turnCountingWAL struct {
	produce.DispatchWAL
	turns atomic.Int64
}

func (w *turnCountingWAL) Durable() <-chan struct{} {
	w.turns.Add(1)
	return w.DispatchWAL.Durable()
}

// step advances the clock by d and waits until the dispatcher started by
// e.run has run a whole pass at the new time, or sleeps without its
// backstop (then nothing it holds depends on the clock).
func (e *env) step(t *testing.T, d time.Duration) {
	t.Helper()
	e.clock.Advance(d)
	seen := e.turns.turns.Load()
	waitFor(t, "a dispatcher pass", func() bool {
		return e.turns.turns.Load() >= seen+2 || (e.running != nil && e.running.Sleeping())
	})
}

// run starts a dispatcher; the returned stop cancels it and waits for Run
// to return (also done at cleanup).
func (e *env) run(t testing.TB) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d := e.dispatcher()
	for owner, took := range e.measured {
		d.FillLatency(owner, took)
	}
	e.running = d
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// records reads every record of topic's partition p (incarnation id).
func (e *env) records(t *testing.T, topic string, id domain.TopicID, p int32) []domain.Record {
	t.Helper()
	recs, err := e.logs.Read(context.Background(), domain.PartitionRef{Topic: topic, TopicID: id, Partition: p}, 0, 1<<20, 0)
	if errors.Is(err, domain.ErrOffsetNotWritten) {
		return nil
	}
	if err != nil {
		t.Fatalf("read %s/%d: %v", topic, p, err)
	}
	return recs
}

// waitFor polls cond every millisecond until it holds, failing the test
// after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// walRecords returns every record appended to the WAL so far.
func (e *env) walRecords(t *testing.T) []ports.WALEntry {
	t.Helper()
	entries, err := e.wal.ReadFrom(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// countingStore counts the freshness calls a confirmation makes.
type countingStore struct {
	*fake.MetaStore
	barriers atomic.Int64
	caughtUp atomic.Int64
}

func (s *countingStore) Barrier(ctx context.Context) error {
	s.barriers.Add(1)
	return s.MetaStore.Barrier(ctx)
}

func (s *countingStore) CaughtUp() bool {
	s.caughtUp.Add(1)
	return s.MetaStore.CaughtUp()
}

// recordingCommitter wraps the real Committer, recording every request
// and outcome.
type recordingCommitter struct {
	inner *produce.Committer
	clock *fake.Clock
	// slow, when set, is how long every commit takes: the fake clock moves
	// on by it before the commit returns, as the dispatcher measures it.
	slow  atomic.Int64
	mu    sync.Mutex
	calls []commitCall
}

type commitCall struct {
	req ports.CommitRequest
	err error
}

func (c *recordingCommitter) CommitBatch(ctx context.Context, req ports.CommitRequest) (int64, error) {
	first, err := c.inner.CommitBatch(ctx, req)
	if d := time.Duration(c.slow.Load()); d > 0 {
		c.clock.Advance(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, commitCall{req: req, err: err})
	return first, err
}

// slowPeers is the fake peer committer as the dispatcher sees it: it logs
// every call's batches (by partition) and, with slow set, moves the fake
// clock on by slow before each call returns.
type slowPeers struct {
	*fake.PeerCommitter
	clock *fake.Clock
	slow  atomic.Int64
	mu    sync.Mutex
	calls [][]int32 // per call, the partition of each batch
}

func (p *slowPeers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	p.log(req)
	first, err := p.PeerCommitter.CommitBatch(ctx, node, req)
	p.wait()
	return first, err
}

func (p *slowPeers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	p.log(reqs...)
	out := p.PeerCommitter.CommitBatches(ctx, node, reqs)
	p.wait()
	return out
}

func (p *slowPeers) log(reqs ...ports.CommitRequest) {
	call := make([]int32, len(reqs))
	for i, r := range reqs {
		call[i] = r.Partition
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call)
}

func (p *slowPeers) wait() {
	if d := time.Duration(p.slow.Load()); d > 0 {
		p.clock.Advance(d)
	}
}

// callLog returns the calls so far, each as its batches' partitions.
func (p *slowPeers) callLog() [][]int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([][]int32(nil), p.calls...)
}

// commitEach answers reqs one at a time through commit, as a peer
// committer without multi-batch calls would: test wrappers that hold or
// fail CommitBatch use it for CommitBatches too.
func commitEach(ctx context.Context, node string, reqs []ports.CommitRequest,
	commit func(context.Context, string, ports.CommitRequest) (int64, error)) []ports.CommitOutcome {
	out := make([]ports.CommitOutcome, len(reqs))
	for i, req := range reqs {
		out[i].First, out[i].Err = commit(ctx, node, req)
	}
	return out
}

func (c *recordingCommitter) snapshot() []commitCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]commitCall(nil), c.calls...)
}

func (c *recordingCommitter) failures() int {
	n := 0
	for _, call := range c.snapshot() {
		if call.err != nil {
			n++
		}
	}
	return n
}

// wantWALOrder checks that each of topic's partitions holds exactly the
// records the WAL placed on it, at dense offsets and in WAL order.
func (e *env) wantWALOrder(t *testing.T, topic string, id domain.TopicID, partitions int32) {
	t.Helper()
	want := map[int32][]string{}
	for _, en := range e.walRecords(t) {
		want[en.Record.Partition] = append(want[en.Record.Partition], string(en.Record.Payload))
	}
	for p := range partitions {
		recs := e.records(t, topic, id, p)
		if len(recs) != len(want[p]) {
			t.Fatalf("partition %d holds %d records, want %d", p, len(recs), len(want[p]))
		}
		for i, r := range recs {
			if r.Offset != int64(i) || string(r.Payload) != want[p][i] {
				t.Fatalf("partition %d offset %d = %+v, want %q", p, i, r, want[p][i])
			}
		}
	}
}

package consume_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const self = "node-1"

// env is one node's consume use case over the fakes.
type env struct {
	t    testing.TB
	meta *fake.MetaStore
	// topicReads is the service's view of e.meta's topics, counting reads.
	topicReads *countingTopics
	logs       *fake.PartitionLogs
	reader     *flakyReader
	offsets    *fake.Offsets
	// receives and sink keep receive counts and take dead letters.
	receives *fake.ReceiveLog
	sink     *fake.DeadLetterSink
	clock    *fake.Clock
	metrics  *fake.Metrics
	opts     consume.Options
	svc      *consume.Service
	peers    ports.PeerForwarder // nil: a single node
	tokens   ports.TokenPeers    // nil: no delivery tokens
	stop     func()
	ids      int
}

func newEnv(t testing.TB, opts consume.Options) *env {
	t.Helper()
	e := &env{
		t: t, meta: fake.NewMetaStore(), logs: fake.NewPartitionLogs(), offsets: fake.NewOffsets(),
		clock: fake.NewClock(time.Unix(1_800_000_000, 0)), metrics: &fake.Metrics{}, opts: opts,
		receives: fake.NewReceiveLog(), sink: fake.NewDeadLetterSink(),
	}
	e.reader = &flakyReader{PartitionReader: e.logs, corrupt: map[int64]bool{}}
	e.topicReads = &countingTopics{MetadataTopics: e.meta, reads: map[string]int{}}
	e.svc = e.newService(e.offsets)
	t.Cleanup(e.shutdown)
	return e
}

func (e *env) newService(offsets ports.OffsetStore) *consume.Service {
	e.t.Helper()
	svc, err := consume.New(consume.Deps{
		Topics: e.topicReads, Cluster: e.meta, Logs: e.reader, Offsets: offsets, Clock: e.clock,
		Metrics: e.metrics, SelfID: self, Seeds: rand.Reader, Peers: e.peers, Tokens: e.tokens,
		Receives: e.receives, DeadLetters: e.sink,
	}, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	return svc
}

// run starts the service's background loops until the test ends (or restart).
func (e *env) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.svc.Run(ctx)
	}()
	e.stop = func() { cancel(); <-done }
}

func (e *env) shutdown() {
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	_ = e.svc.Close()
}

// followMetadata runs ForgetDeleted over the fake metadata log until the
// test ends.
func (e *env) followMetadata() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.svc.ForgetDeleted(ctx, e.meta) }()
	e.t.Cleanup(func() { cancel(); <-done })
}

// restart closes the service cleanly and starts a new one over offsets.
func (e *env) restart(offsets ports.OffsetStore, clean bool) {
	e.t.Helper()
	running := e.stop != nil
	if e.stop != nil {
		e.stop()
		e.stop = nil
	}
	if clean {
		if err := e.svc.Close(); err != nil {
			e.t.Fatal(err)
		}
	}
	e.svc = e.newService(offsets)
	if running {
		e.run()
	}
}

// createTopic creates a topic through proposals and assigns every
// partition to owner(p) ("" leaves it unassigned).
func (e *env) createTopic(name string, partitions int32, edit func(*meta.CreateTopic), owner func(int32) string) meta.Topic {
	e.t.Helper()
	e.ids++
	ct := &meta.CreateTopic{Name: name, ID: fmt.Sprintf("%016x", e.ids), Partitions: partitions,
		VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024}
	if edit != nil {
		edit(ct)
	}
	e.propose(ct)
	for p := range partitions {
		o := self
		if owner != nil {
			o = owner(p)
		}
		if o != "" {
			e.assign(name, ct.ID, p, o)
		}
	}
	t, ok, err := e.meta.Topic(name)
	if err != nil || !ok {
		e.t.Fatalf("topic %s not created: %v", name, err)
	}
	return t
}

func (e *env) assign(topic, id string, p int32, owner string) {
	e.t.Helper()
	e.propose(&meta.AssignPartitionIfAbsent{Topic: topic, TopicID: id, Partition: p, Owner: owner})
}

func (e *env) propose(ev meta.Event) {
	e.t.Helper()
	res, err := e.meta.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1, Event: ev})
	if err != nil || !res.Result.OK() {
		e.t.Fatalf("propose %T: %v %v", ev, err, res.Result.Err())
	}
}

// produce commits payloads to partition p of t.
func (e *env) produce(t meta.Topic, p int32, payloads ...string) {
	e.t.Helper()
	recs := make([]domain.Record, len(payloads))
	for i, pl := range payloads {
		recs[i] = domain.Record{Payload: []byte(pl)}
	}
	ref := domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: p}
	if _, err := e.logs.CommitDurable(context.Background(), ref, recs); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) consume(req consume.Request) []domain.Delivery {
	e.t.Helper()
	if req.Identity == "" {
		req.Identity = "tester"
	}
	ds, err := e.svc.Consume(context.Background(), req)
	if err != nil {
		e.t.Fatalf("consume %+v: %v", req, err)
	}
	return ds
}

// one consumes one record in queue mode (or pinned when p >= 0) and fails
// when none comes.
func (e *env) one(topic string, p int32) domain.Delivery {
	e.t.Helper()
	req := consume.Request{Topic: topic}
	if p >= 0 {
		req.Mode, req.Partition = consume.ModePinned, p
	}
	ds := e.consume(req)
	if len(ds) != 1 {
		e.t.Fatalf("consume %s/%d: %d deliveries, want 1", topic, p, len(ds))
	}
	return ds[0]
}

// none asserts that a no-wait consume finds nothing.
func (e *env) none(topic string, p int32) {
	e.t.Helper()
	req := consume.Request{Topic: topic}
	if p >= 0 {
		req.Mode, req.Partition = consume.ModePinned, p
	}
	if ds := e.consume(req); len(ds) != 0 {
		e.t.Fatalf("consume %s/%d: got offset %d, want nothing", topic, p, ds[0].Record.Offset)
	}
}

func (e *env) ack(topic string, d domain.Delivery) {
	e.t.Helper()
	if err := e.svc.Ack(context.Background(), topic, *d.Handle); err != nil {
		e.t.Fatalf("ack %s: %v", d.Handle, err)
	}
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(2 * time.Millisecond) // polling interval, not synchronization
	}
}

// flakyReader is the fake partition logs with chosen offsets unreadable,
// and an optional one-shot hook on the next Bounds.
type flakyReader struct {
	ports.PartitionReader
	mu       sync.Mutex
	corrupt  map[int64]bool
	onBounds func()
}

// holdNextBounds makes the next Bounds call fn first.
func (r *flakyReader) holdNextBounds(fn func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onBounds = fn
}

func (r *flakyReader) Bounds(ref domain.PartitionRef) (ports.LogBounds, error) {
	r.mu.Lock()
	fn := r.onBounds
	r.onBounds = nil
	r.mu.Unlock()
	if fn != nil {
		fn()
	}
	return r.PartitionReader.Bounds(ref)
}

func (r *flakyReader) setCorrupt(offsets ...int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range offsets {
		r.corrupt[o] = true
	}
}

func (r *flakyReader) Read(ctx context.Context, ref domain.PartitionRef, from int64, n, b int) ([]domain.Record, error) {
	r.mu.Lock()
	bad := r.corrupt[from]
	r.mu.Unlock()
	if bad {
		return nil, fmt.Errorf("flaky reader: offset %d: %w", from, domain.ErrRecordCorrupt)
	}
	return r.PartitionReader.Read(ctx, ref, from, n, b)
}

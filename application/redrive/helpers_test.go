package redrive_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/redrive"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// dlq is the dead-letter topic of every test; its leases last
// visibilityMs.
const (
	dlq          = "jobs-dlq"
	visibilityMs = 300
)

// source is an in-memory dead-letter topic of one partition: Lease hands
// out what is neither acked nor leased, at once (an empty answer when
// nothing is left), Ack settles handles of live leases.
type source struct {
	mu       sync.Mutex
	payloads [][]byte
	leased   map[int64]uint64 // offset → nonce of its live lease
	acked    map[int64]bool
	nonce    uint64
	refuse   map[int64]bool // acks refused once (a lapsed lease)
	onLease  func()         // runs at each Lease, before it answers
	failNext error          // the next Lease fails with it
}

func newSource(payloads ...[]byte) *source {
	return &source{payloads: payloads, leased: map[int64]uint64{}, acked: map[int64]bool{}, refuse: map[int64]bool{}}
}

func (s *source) Lease(_ context.Context, topic string, max int, _ time.Duration) ([]domain.Delivery, error) {
	if s.onLease != nil {
		s.onLease()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failNext; err != nil {
		s.failNext = nil
		return nil, err
	}
	var out []domain.Delivery
	for off, p := range s.payloads {
		o := int64(off)
		if len(out) == max {
			break
		}
		if _, held := s.leased[o]; held || s.acked[o] {
			continue
		}
		s.nonce++
		s.leased[o] = s.nonce
		out = append(out, domain.Delivery{Topic: topic, Record: domain.Record{Offset: o, Payload: p},
			Handle: &domain.ReceiptHandle{Offset: o, Nonce: s.nonce}})
	}
	return out, nil
}

func (s *source) Ack(_ context.Context, _ string, hs []domain.ReceiptHandle) ([]error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]error, len(hs))
	for i, h := range hs {
		if s.refuse[h.Offset] || s.leased[h.Offset] != h.Nonce {
			delete(s.refuse, h.Offset)
			out[i] = domain.ErrLeaseGone
			continue
		}
		delete(s.leased, h.Offset)
		s.acked[h.Offset] = true
	}
	return out, nil
}

// lapse ends every live lease, as a visibility timeout would.
func (s *source) lapse() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.leased)
}

func (s *source) ackedOffsets() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for o := range s.acked {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}

// sink records what is produced, by topic, and fails topics told to.
type sink struct {
	mu    sync.Mutex
	got   map[string][]string
	fail  map[string]error
	calls int
}

func newSink() *sink { return &sink{got: map[string][]string{}, fail: map[string]error{}} }

func (s *sink) Produce(_ context.Context, topic string, msgs []redrive.Message) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := s.fail[topic]; err != nil {
		return err
	}
	for _, m := range msgs {
		s.got[topic] = append(s.got[topic], fmt.Sprintf("%q=%q", m.Key, m.Payload))
	}
	return nil
}

func (s *sink) setFail(topic string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[topic] = err
}

func (s *sink) produced(topic string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got[topic])
}

// letter is the dead letter of message i of origin.
func letter(origin string, i int) []byte {
	return deadletter.AppendLetter(nil, deadletter.Letter{Topic: origin, Offset: int64(i), ReceiveCount: 3,
		Key: fmt.Appendf(nil, "k%d", i), Payload: fmt.Appendf(nil, `{"n":%d}`, i)})
}

// letters are the dead letters of messages 0..n-1 of origin.
func letters(origin string, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = letter(origin, i)
	}
	return out
}

// want is what produce of message i of letter should have carried.
func want(i int) string {
	return fmt.Sprintf("%q=%q", fmt.Sprintf("k%d", i), fmt.Sprintf(`{"n":%d}`, i))
}

// fixture is a runner on fakes, with the dead-letter topic created.
type fixture struct {
	store   *fake.MetaStore
	src     *source
	sink    *sink
	metrics *fake.Metrics
	clock   ports.Clock
	topicID string
}

func newFixture(t *testing.T, src *source, clock ports.Clock) *fixture {
	t.Helper()
	f := &fixture{store: fake.NewMetaStore(), src: src, sink: newSink(), metrics: &fake.Metrics{}, clock: clock,
		topicID: "00000000000000d1"}
	for _, name := range []string{dlq, "jobs", "retry"} {
		id := f.topicID
		if name != dlq {
			id = fmt.Sprintf("%016x", len(name))
		}
		f.propose(t, &meta.CreateTopic{Name: name, ID: id, Partitions: 1, VisibilityTimeoutMs: visibilityMs,
			MaxInFlight: 1024, MaxAckedAhead: 1024})
	}
	return f
}

func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	applied, err := f.store.Propose(context.Background(), meta.Envelope{Actor: "test", AtMs: 1, Event: ev})
	if err != nil || applied.Result.Code != meta.CodeOK {
		t.Fatalf("propose %T: %v %+v", ev, err, applied.Result)
	}
}

// start proposes a running job j (its id, state and times filled in).
func (f *fixture) start(t *testing.T, j meta.Redrive) meta.Redrive {
	t.Helper()
	j.ID, j.State = "0123456789abcdef", deadletter.RedriveRunning
	j.StartedAtMs, j.UpdatedAtMs = f.clock.Now().UnixMilli(), f.clock.Now().UnixMilli()
	f.propose(t, &meta.SetTopicRedrive{Name: dlq, ID: f.topicID, Redrive: j})
	return j
}

// run runs a runner with short intervals until the test ends.
func (f *fixture) run(t *testing.T) {
	t.Helper()
	r := redrive.New(redrive.Deps{Store: f.store, Source: f.src, Sink: f.sink, Clock: f.clock, Metrics: f.metrics,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))},
		redrive.Intervals(5*time.Millisecond, 20*time.Millisecond, time.Millisecond, 5*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// job reads the topic's job.
func (f *fixture) job(t *testing.T) meta.Redrive {
	t.Helper()
	tp, ok, err := f.store.Topic(dlq)
	if err != nil || !ok || tp.Redrive == nil {
		t.Fatalf("topic %v %v %+v", ok, err, tp.Redrive)
	}
	return *tp.Redrive
}

// waitEnded polls until the job is no longer running.
func (f *fixture) waitEnded(t *testing.T) meta.Redrive {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if j := f.job(t); !j.Running() {
			return j
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("job still running: %+v", f.job(t))
	return meta.Redrive{}
}

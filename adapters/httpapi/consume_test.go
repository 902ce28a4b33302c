package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const consumeSelf = "node-1"

// consumeFixture is one node's consume and ack routes over the real use
// case on fakes, its background loops running.
type consumeFixture struct {
	t       testing.TB
	store   *fake.MetaStore
	logs    *fake.PartitionLogs
	clock   *fake.Clock
	svc     *consume.Service
	engine  *gin.Engine
	topicID int
	// sink takes the dead letters of topics given a policy.
	sink *fake.DeadLetterSink
}

func newConsumeFixture(t testing.TB, maxWait time.Duration, opts consume.Options) *consumeFixture {
	t.Helper()
	return newConsumeFixtureWith(t, maxWait, opts, nil)
}

// newConsumeFixtureWith is newConsumeFixture on a node that forwards to its
// peers through peers (nil: a single node).
func newConsumeFixtureWith(t testing.TB, maxWait time.Duration, opts consume.Options, peers ports.PeerForwarder) *consumeFixture {
	t.Helper()
	f := &consumeFixture{t: t, store: fake.NewMetaStore(), logs: fake.NewPartitionLogs(), clock: fake.NewClock(time.Now()), sink: fake.NewDeadLetterSink()}
	svc, err := consume.New(consume.Deps{
		Topics: f.store, Cluster: f.store, Logs: f.logs, Offsets: fake.NewOffsets(), Clock: f.clock,
		Metrics: &fake.Metrics{}, SelfID: consumeSelf, Seeds: rand.Reader, Peers: peers,
		Receives: fake.NewReceiveLog(), DeadLetters: f.sink,
	}, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	identity := func(c *gin.Context) string { return c.GetHeader("X-Test-User") }
	f.engine = NewEngine(zap.NewNop(), ConsumeRoutes(svc, zap.NewNop(), maxWait, identity)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = svc.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = svc.Close()
		f.store.Close()
	})
	return f
}

// topic creates a topic of n partitions, all owned here.
func (f *consumeFixture) topic(name string, n int32, edit func(*meta.CreateTopic)) meta.Topic {
	f.t.Helper()
	f.topicID++
	ct := &meta.CreateTopic{Name: name, ID: fmt.Sprintf("%016x", f.topicID), Partitions: n, VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024}
	if edit != nil {
		edit(ct)
	}
	f.propose(ct)
	for p := range n {
		f.propose(&meta.AssignPartitionIfAbsent{Topic: name, TopicID: ct.ID, Partition: p, Owner: consumeSelf})
	}
	t, _, _ := f.store.Topic(name)
	return t
}

func (f *consumeFixture) propose(ev meta.Event) {
	f.t.Helper()
	res, err := f.store.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: ev})
	if err != nil || !res.Result.OK() {
		f.t.Fatalf("%T: %v %v", ev, err, res.Result.Err())
	}
}

func (f *consumeFixture) produce(t meta.Topic, p int32, payloads ...string) {
	f.t.Helper()
	recs := make([]domain.Record, len(payloads))
	for i, pl := range payloads {
		recs[i] = domain.Record{Payload: []byte(pl), CommittedAtMs: time.Now().UnixMilli()}
	}
	ref := domain.PartitionRef{Topic: t.Name, TopicID: domain.TopicID(t.ID), Partition: p}
	if _, err := f.logs.CommitDurable(context.Background(), ref, recs); err != nil {
		f.t.Fatal(err)
	}
}

// do serves one request; hdr are name, value pairs.
func (f *consumeFixture) do(method, target string, body string, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	f.engine.ServeHTTP(rec, req)
	return rec
}

func (f *consumeFixture) get(target string, hdr ...string) *httptest.ResponseRecorder {
	return f.do(http.MethodGet, target, "", hdr...)
}

// ack posts a body-less single ack with the JSON content type.
func (f *consumeFixture) ack(topic, handle, extra string) *httptest.ResponseRecorder {
	return f.do(http.MethodPost, "/v1/topics/"+topic+"/ack?receipt_handle="+handle+extra, "", "Content-Type", "application/json")
}

// wireEnvelope is a consumed message as a client decodes it.
type wireEnvelope struct {
	Topic           string          `json:"topic"`
	Partition       int32           `json:"partition"`
	Offset          int64           `json:"offset"`
	Key             *string         `json:"key"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
	Timestamp       int64           `json:"timestamp"`
	ReceiptHandle   *string         `json:"receipt_handle"`
}

func envelopeOf(t testing.TB, rec *httptest.ResponseRecorder) wireEnvelope {
	t.Helper()
	if rec.Code != http.StatusOK || !strings.HasSuffix(rec.Body.String(), "}\n") {
		t.Fatalf("want 200 with one envelope, got %d %q", rec.Code, rec.Body.String())
	}
	var env wireEnvelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("envelope %q: %v", rec.Body.String(), err)
	}
	return env
}

func batchOf(t testing.TB, rec *httptest.ResponseRecorder) []wireEnvelope {
	t.Helper()
	var b struct {
		Messages []wireEnvelope `json:"messages"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &b) != nil || !strings.HasSuffix(rec.Body.String(), "]}\n") {
		t.Fatalf("want 200 with a batch, got %d %q", rec.Code, rec.Body.String())
	}
	return b.Messages
}

// wantError checks an error answer: status and the error body exactly.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, msg string) {
	t.Helper()
	want := string(appendErrorBody(nil, msg))
	if rec.Code != status || rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), status, want)
	}
}

func wantEmpty(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("want an empty 204, got %d %q", rec.Code, rec.Body.String())
	}
}

// ensure that consumed envelopes carry the fields of api.md §2.14.1 and
// render JSON, text and binary payloads (conformance 99, 102-107; story F8).
func TestConsumeEnvelopes(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	f.produce(tp, 0, `{"order_id":"ord_123"}`, "hello world", "\xff\xfe\x00", "42")
	handle := regexp.MustCompile(`^[0-9]+:[0-9]+:[1-9][0-9]*$`)

	env := envelopeOf(t, f.get("/v1/topics/orders/consume"))
	if env.Topic != "orders" || env.Partition != 0 || env.Offset != 0 || string(env.Payload) != `{"order_id":"ord_123"}` || env.Key != nil {
		t.Fatalf("json: %+v", env)
	}
	if env.ReceiptHandle == nil || !handle.MatchString(*env.ReceiptHandle) || !strings.HasPrefix(*env.ReceiptHandle, "0:0:") {
		t.Fatalf("handle %v", env.ReceiptHandle)
	}
	if d := time.Now().Unix() - env.Timestamp; d < -5 || d > 5 {
		t.Fatalf("timestamp %d", env.Timestamp)
	}
	text := envelopeOf(t, f.get("/v1/topics/orders/consume"))
	if string(text.Payload) != `"hello world"` || text.PayloadEncoding != "" {
		t.Fatalf("text: %s %q", text.Payload, text.PayloadEncoding)
	}
	bin := envelopeOf(t, f.get("/v1/topics/orders/consume"))
	var s string
	_ = json.Unmarshal(bin.Payload, &s)
	if raw, _ := base64.StdEncoding.DecodeString(s); bin.PayloadEncoding != "base64" || string(raw) != "\xff\xfe\x00" {
		t.Fatalf("binary: %s %q", bin.Payload, bin.PayloadEncoding)
	}
	if n := envelopeOf(t, f.get("/v1/topics/orders/consume")); string(n.Payload) != "42" {
		t.Fatalf("number: %s", n.Payload)
	}
}

// ensure that a wait on an empty topic answers 204 after the wait, a wait
// above the ceiling is clamped and says so, a negative wait answers at
// once, and a produce wakes a long poll (conformance 99, 100, 101, 113, 114, 211).
func TestConsumeWaits(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 300*time.Millisecond, consume.Options{})
	tp := f.topic("orders", 3, nil)
	start := time.Now()
	rec := f.get("/v1/topics/orders/consume?wait=200ms")
	if took := time.Since(start); took < 150*time.Millisecond || took > 800*time.Millisecond || rec.Header().Get(waitClampedHeader) != "" {
		t.Fatalf("wait=200ms answered after %v, clamped %q", took, rec.Header().Get(waitClampedHeader))
	}
	wantEmpty(t, rec)
	start = time.Now()
	rec = f.get("/v1/topics/orders/consume?wait=60s")
	wantEmpty(t, rec)
	if took := time.Since(start); took < 250*time.Millisecond || took > 5*time.Second || rec.Header().Get(waitClampedHeader) != "300ms" {
		t.Fatalf("wait=60s answered after %v, clamped %q", took, rec.Header().Get(waitClampedHeader))
	}
	start = time.Now()
	wantEmpty(t, f.get("/v1/topics/orders/consume?wait=-2s"))
	wantEmpty(t, f.get("/v1/topics/orders/consume?max=5&wait=200ms", clientHeader, "test"))
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("batch wait=200ms answered at once")
	}

	slow := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp = slow.topic("orders", 3, nil)
	got := make(chan *httptest.ResponseRecorder, 1)
	start = time.Now()
	go func() { got <- slow.get("/v1/topics/orders/consume?wait=5s") }()
	for slow.svc.Parked() == 0 {
		time.Sleep(time.Millisecond) // polling until parked, not synchronization of the outcome
	}
	slow.produce(tp, 1, `"woken"`)
	if env := envelopeOf(t, <-got); string(env.Payload) != `"woken"` || time.Since(start) > 2*time.Second {
		t.Fatalf("long poll: %s after %v", env.Payload, time.Since(start))
	}
}

// ensure that pinned consume, replay and the query refusals answer as
// api.md §2.14 says (conformance 109, 110, 111, 112, 115; story F9).
func TestConsumePinnedReplayAndRefusals(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 3, nil)
	f.produce(tp, 1, `{"n":0}`, `{"n":1}`)
	wantEmpty(t, f.get("/v1/topics/orders/consume?partition=0"))
	for range 2 {
		env := envelopeOf(t, f.get("/v1/topics/orders/consume?partition=1&offset=0"))
		if env.ReceiptHandle != nil || env.Offset != 0 || env.Partition != 1 {
			t.Fatalf("replay: %+v", env)
		}
	}
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume?partition=1")); env.Offset != 0 || env.ReceiptHandle == nil {
		t.Fatalf("pinned after replay: %+v", env)
	}
	wantEmpty(t, f.get("/v1/topics/orders/consume?partition=0&offset=999"))
	wantError(t, f.get("/v1/topics/orders/consume?offset=0"), 400, "partition required for replay-mode consume")
	wantError(t, f.get("/v1/topics/nope/consume"), 404, "topic not found")
	wantError(t, f.get("/v1/topics/orders/consume?partition=99"), 400, "invalid argument: partition out of range")
	wantError(t, f.get("/v1/topics/orders/consume?partition=0&offset=-1"), 400, "invalid offset: must be >= 0")
	for _, q := range []string{"partition=abc", "partition=0&offset=xyz", "wait=notaduration"} {
		if rec := f.get("/v1/topics/orders/consume?" + q); rec.Code != 400 {
			t.Fatalf("%s: %d", q, rec.Code)
		}
	}
	f.logs.SetRetention("orders", domain.TopicID(tp.ID), time.Minute)
	f.logs.Advance(2 * time.Minute)
	f.produce(tp, 1, "late")
	wantError(t, f.get("/v1/topics/orders/consume?partition=1&offset=0"), 410,
		"receipt handle no longer matches an active reservation: offset 0 aged out of retention (oldest retained: 2)")
}

// ensure that batch consume answers the wrapper object with one leased
// envelope per message, honours max, the in-flight cap and a pinned
// partition, and refuses what api.md §2.14.3 refuses (conformance 208-216).
func TestBatchConsumeRoute(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 2, nil)
	f.produce(tp, 0, "a", "b", "c")
	rec := f.get("/v1/topics/orders/consume?max=10")
	if rec.Code != 400 {
		t.Fatalf("max without X-Narad-Client: %d", rec.Code)
	}
	msgs := batchOf(t, f.get("/v1/topics/orders/consume?max=10", clientHeader, "test"))
	if len(msgs) != 3 || *msgs[0].ReceiptHandle == *msgs[1].ReceiptHandle || *msgs[1].ReceiptHandle == *msgs[2].ReceiptHandle {
		t.Fatalf("batch: %+v", msgs)
	}
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	f.produce(tp, 1, "x", "y")
	if msgs := batchOf(t, f.get("/v1/topics/orders/consume?max=1&partition=1", clientHeader, "test")); len(msgs) != 1 || msgs[0].Partition != 1 {
		t.Fatalf("max=1: %+v", msgs)
	}
	for _, q := range []string{"max=0", "max=101", "max=abc", "max=5&partition=0&offset=0"} {
		if rec := f.get("/v1/topics/orders/consume?"+q, clientHeader, "test"); rec.Code != 400 {
			t.Fatalf("%s: %d", q, rec.Code)
		}
	}
	capped := f.topic("capped", 1, func(c *meta.CreateTopic) { c.MaxInFlight = 2 })
	f.produce(capped, 0, "1", "2", "3", "4", "5")
	if msgs := batchOf(t, f.get("/v1/topics/capped/consume?max=10", clientHeader, "test")); len(msgs) != 2 {
		t.Fatalf("in-flight cap 2: %d messages", len(msgs))
	}
	wantEmpty(t, f.get("/v1/topics/capped/consume?partition=0"))
}

// ensure that the per-identity cap answers 429 with the spec's message,
// counting a batch as its max (conformance 164, 165).
func TestConsumeCapPerIdentity(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{MaxInFlightPerIdentity: 2})
	f.topic("empty", 1, nil)
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			f.get("/v1/topics/empty/consume?wait=1s", "X-Test-User", "u")
			done <- struct{}{}
		}()
	}
	for f.svc.Parked() < 2 {
		time.Sleep(time.Millisecond) // polling until both wait
	}
	wantError(t, f.get("/v1/topics/empty/consume", "X-Test-User", "u"), 429,
		"too many in-flight consume requests for this identity (limit 2 per node)")
	wantEmpty(t, f.get("/v1/topics/empty/consume", "X-Test-User", "v"))
	<-done
	<-done
	wantEmpty(t, f.get("/v1/topics/empty/consume?max=10", "X-Test-User", "u", clientHeader, "t"))
}

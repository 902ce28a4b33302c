package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// produceEnv is one node's produce routes over the real use case on fakes.
type produceEnv struct {
	store   *fake.MetaStore
	wal     *fake.WAL
	clock   *fake.Clock
	schemas *fake.SchemaValidator
	svc     *produce.Service
	engine  *gin.Engine
}

func newProduceEnv(t testing.TB) *produceEnv {
	t.Helper()
	store := fake.NewMetaStore()
	t.Cleanup(store.Close)
	p := &produceEnv{store: store, wal: fake.NewWAL(), clock: fake.NewClock(time.Unix(1_700_000_000, 0)), schemas: fake.NewSchemaValidator()}
	p.svc = produce.NewService(produce.ServiceDeps{Topics: store, WAL: p.wal, Schemas: p.schemas, Clock: p.clock, Metrics: &fake.Metrics{}})
	p.engine = NewEngine(zap.NewNop(), ProduceRoutes(p.svc, zap.NewNop())...)
	return p
}

func (p *produceEnv) propose(t testing.TB, ev meta.Event) {
	t.Helper()
	got, err := p.store.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("%s: %+v %v", ev.Type(), got, err)
	}
}

func (p *produceEnv) create(t testing.TB, name string, n int) {
	t.Helper()
	p.propose(t, &meta.CreateTopic{Name: name, ID: fmt.Sprintf("%016x", n), Partitions: 3, VisibilityTimeoutMs: 30_000})
}

// post sends body with the given headers (Content-Type application/json
// unless set).
func (p *produceEnv) post(path string, body []byte, hdr ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	p.engine.ServeHTTP(rec, req)
	return rec
}

func (p *produceEnv) stored(t testing.TB) []domain.IngressRecord {
	t.Helper()
	entries, err := p.wal.ReadFrom(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]domain.IngressRecord, len(entries))
	for i, e := range entries {
		out[i] = e.Record
	}
	return out
}

func wantAnswer(t testing.TB, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if rec.Code != status || rec.Body.String() != body {
		t.Fatalf("answer %d %q, want %d %q", rec.Code, rec.Body.String(), status, body)
	}
}

// errBody is the error body of msg, encoded as writeError encodes it.
func errBody(msg string) string { return string(appendErrorBody(nil, msg)) }

// ensure that a produce answers 202 with an empty body and stores the body
// as sent, whatever it holds, ignoring unknown parameters (conformance 85, 86, 90).
func TestProduceAccepts(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	bodies := []string{`{"order_id":"ord_124"}`, "hello", "{not valid", "[1,2,3]", `""`}
	for _, b := range bodies {
		wantAnswer(t, p.post("/v1/topics/t/produce", []byte(b), "Content-Type", "application/octet-stream"), http.StatusAccepted, "")
	}
	wantAnswer(t, p.post("/v1/topics/t/produce?garbage=true", []byte("x")), http.StatusAccepted, "")
	got := p.stored(t)
	for i, b := range bodies {
		if string(got[i].Payload) != b {
			t.Fatalf("record %d = %q, want %q", i, got[i].Payload, b)
		}
	}
}

// ensure that the single produce refusals carry the spec's statuses and
// messages and store nothing (conformance 87, 88, 89, 91, 97; 0.2 body cap).
func TestProduceRefusals(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	p.create(t, "d", 2)
	p.propose(t, &meta.AttachChild{Parent: "t", Child: "d", Epoch: fmt.Sprintf("%016x", 77), DelayMs: 60_000})
	cases := []struct {
		path   string
		body   []byte
		status int
		msg    string
	}{
		{"/v1/topics/t/produce", nil, 400, "message required"},
		{"/v1/topics/t/produce", make([]byte, 1<<20+1), 413, "request body too large"},
		{"/v1/topics/missing/produce", []byte("x"), 404, "topic not found"},
		{"/v1/topics/t/produce?key=a&key=b", []byte("x"), 400, "duplicate key query parameter"},
		{"/v1/topics/t/produce?partition=1&partition=2", []byte("x"), 400, "duplicate partition query parameter"},
		{"/v1/topics/t/produce?partition=", []byte("x"), 400, "invalid partition: empty"},
		{"/v1/topics/t/produce?partition=-1", []byte("x"), 400, "invalid partition: must be >= 0"},
		{"/v1/topics/t/produce?partition=bad", []byte("x"), 400, `invalid partition: strconv.ParseInt: parsing "bad": invalid syntax`},
		{"/v1/topics/t/produce?partition=99", []byte("x"), 400, "invalid argument: partition out of range"},
		{"/v1/topics/d/produce", []byte("x"), 409, "direct produce to a delayed child topic is not allowed"},
	}
	for _, c := range cases {
		wantAnswer(t, p.post(c.path, c.body), c.status, errBody(c.msg))
	}
	if n := p.wal.DurableNext(); n != 0 {
		t.Fatalf("refusals stored %d records", n)
	}
	wantAnswer(t, p.post("/v1/topics/t/produce", make([]byte, 1<<20)), http.StatusAccepted, "")
}

// ensure that keys, pins and the keyless rotation place records as the
// spec says, keyless records carry no key and keys are stored as decoded
// (conformance 92, 93, 94, 187, 188).
func TestProducePlacement(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	for range 5 {
		p.post("/v1/topics/t/produce?key=same", []byte("k"))
	}
	p.post("/v1/topics/t/produce?key=same&partition=2", []byte("pinned"))
	for range 9 {
		p.post("/v1/topics/t/produce", []byte("rr"))
	}
	p.post("/v1/topics/t/produce?key=a+b", []byte("x"))
	p.post("/v1/topics/t/produce?key=%FF%00", []byte("x"))
	got := p.stored(t)
	if len(got) != 17 {
		t.Fatalf("stored %d records, want 17", len(got))
	}
	for _, r := range got[:5] {
		if r.Partition != got[0].Partition || string(r.Key) != "same" {
			t.Fatalf("keyed record %+v", r)
		}
	}
	if got[5].Partition != 2 {
		t.Fatalf("pinned record in partition %d", got[5].Partition)
	}
	spread := map[int32]int{}
	for _, r := range got[6:15] {
		if r.Key != nil {
			t.Fatalf("keyless record stored with key %q", r.Key)
		}
		spread[r.Partition]++
	}
	if spread[0] != 3 || spread[1] != 3 || spread[2] != 3 {
		t.Fatalf("keyless spread %v", spread)
	}
	if string(got[15].Key) != "a b" || !bytes.Equal(got[16].Key, []byte{0xff, 0x00}) {
		t.Fatalf("keys %q and %q", got[15].Key, got[16].Key)
	}
}

// ensure that a schema topic refuses what its validator refuses, trailing
// data included, with the validator's message (conformance 186).
func TestProduceSchema(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.propose(t, schemaTopic("s", 1))
	wantAnswer(t, p.post("/v1/topics/s/produce", []byte(`{"id":1} {"id":2}`)), 400, errBody("invalid argument: schema: payload is not one JSON text"))
	wantAnswer(t, p.post("/v1/topics/s/produce", []byte(`{"id":1}`)), 202, "")
}

// ensure that an ingress WAL failure is a 500 "produce failed".
func TestProduceWALFailure(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	p.wal.FailNextAppend(nil)
	wantAnswer(t, p.post("/v1/topics/t/produce", []byte("x")), 500, errBody("produce failed"))
	p.wal.FailNextAppend(nil)
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(`{"messages":[{"payload":1}]}`)), 500, errBody("produce failed"))
}

// ensure that the single produce obeys the 415 rule before anything else.
func TestProduce415(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	wantAnswer(t, p.post("/v1/topics/t/produce", []byte("x"), "Content-Type", "text/plain"), 415, errBody(msg415))
	wantAnswer(t, p.post("/v1/topics/t/produce", []byte("x"), "Content-Type", "", "X-Narad-Client", "c"), 202, "")
}

// ensure that accepted records are committed end to end: 500 concurrent
// produces from 10 clients all become visible at dense offsets, and a
// pinned batch lands at offsets 0, 1, 2 in order (conformance 95, 98, 192).
func TestProduceEndToEnd(t *testing.T) {
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	p.create(t, "b", 2)
	for _, name := range []string{"t", "b"} {
		tp, _, _ := p.store.Topic(name)
		for part := range tp.Partitions {
			p.propose(t, &meta.AssignPartitionIfAbsent{Topic: name, TopicID: tp.ID, Partition: part, Owner: "n1"})
		}
	}
	logs := runDispatcher(t, p)
	done := make(chan struct{})
	for c := range 10 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 50 {
				if rec := p.post("/v1/topics/t/produce", fmt.Appendf(nil, "c%d-%d", c, i)); rec.Code != 202 {
					t.Errorf("produce answered %d", rec.Code)
				}
			}
		}()
	}
	for range 10 {
		<-done
	}
	wantAnswer(t, p.post("/v1/topics/b/produce/batch", []byte(`{"messages":[{"payload":"a","partition":0},{"payload":"b","partition":0},{"payload":"c","partition":0}]}`)),
		202, "{\"accepted\":3}\n")
	waitUntil(t, func() bool { return p.wal.Checkpoint() == 503 })
	tp, _, _ := p.store.Topic("t")
	seen := 0
	for part := range tp.Partitions {
		recs := readAll(t, logs, domain.PartitionRef{Topic: "t", TopicID: domain.TopicID(tp.ID), Partition: part})
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Fatalf("partition %d: offset %d at position %d", part, r.Offset, i)
			}
		}
		seen += len(recs)
	}
	if seen != 500 {
		t.Fatalf("%d records visible, want 500", seen)
	}
	bt, _, _ := p.store.Topic("b")
	recs := readAll(t, logs, domain.PartitionRef{Topic: "b", TopicID: domain.TopicID(bt.ID), Partition: 0})
	if len(recs) != 3 || string(recs[0].Payload) != `"a"` || string(recs[2].Payload) != `"c"` || recs[2].Offset != 2 {
		t.Fatalf("batch partition holds %+v", recs)
	}
}

func readAll(t *testing.T, logs ports.PartitionReader, ref domain.PartitionRef) []domain.Record {
	t.Helper()
	recs, err := logs.Read(context.Background(), ref, 0, 1<<20, 0)
	if err != nil {
		t.Fatalf("read %s: %v", ref, err)
	}
	return recs
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		<-tick.C
	}
}

// BenchmarkProduceHandler measures the single produce path: an httptest
// request through the engine into Accept on the fake WAL.
func BenchmarkProduceHandler(b *testing.B) {
	p := newProduceEnv(b)
	p.create(b, "bench", 1)
	body := bytes.Repeat([]byte("x"), 100)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/v1/topics/bench/produce?key=k", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/octet-stream")
			rec := httptest.NewRecorder()
			p.engine.ServeHTTP(rec, req)
			if rec.Code != http.StatusAccepted {
				b.Fatalf("answer %d %s", rec.Code, strings.TrimSpace(rec.Body.String()))
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// holdTag marks a payload the gated WAL keeps in flight until released.
const holdTag = "hold"

// gatedWAL is the fake WAL, except that an append carrying a payload with
// holdTag reports on entered and waits for release: the produce that sent
// it stays in flight, holding whatever it holds, for as long as the test
// wants.
type gatedWAL struct {
	*fake.WAL
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGatedWAL() *gatedWAL {
	return &gatedWAL{WAL: fake.NewWAL(), entered: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g *gatedWAL) open() { g.once.Do(func() { close(g.release) }) }

func (g *gatedWAL) gate(recs ...domain.IngressRecord) {
	for _, r := range recs {
		if bytes.Contains(r.Payload, []byte(holdTag)) {
			g.entered <- struct{}{}
			<-g.release
			return
		}
	}
}

func (g *gatedWAL) Append(ctx context.Context, rec domain.IngressRecord) (uint64, error) {
	g.gate(rec)
	return g.WAL.Append(ctx, rec)
}

func (g *gatedWAL) AppendMany(ctx context.Context, recs []domain.IngressRecord) (uint64, error) {
	g.gate(recs...)
	return g.WAL.AppendMany(ctx, recs)
}

// limitEnv is the produce routes under limits, over the real use case on
// fakes with a gated WAL.
type limitEnv struct {
	wal        *gatedWAL
	engine     *gin.Engine
	rejections atomic.Int64
	pending    sync.WaitGroup
}

func newLimitEnv(t *testing.T, limits ProduceLimits) *limitEnv {
	t.Helper()
	store := fake.NewMetaStore()
	t.Cleanup(store.Close)
	e := &limitEnv{wal: newGatedWAL()}
	svc := produce.NewService(produce.ServiceDeps{Topics: store, WAL: e.wal, Schemas: fake.NewSchemaValidator(),
		Clock: fake.NewClock(time.Unix(1_700_000_000, 0)), Metrics: &fake.Metrics{}})
	limits.BudgetRejected = func() { e.rejections.Add(1) }
	e.engine = NewEngine(zap.NewNop(), ProduceRoutesWith(svc, zap.NewNop(), limits)...)
	(&produceEnv{store: store}).create(t, "t", 1)
	t.Cleanup(func() {
		e.wal.open()
		e.pending.Wait()
	})
	return e
}

// byUser is the identity of a request: its X-Test-User header.
func byUser(c *gin.Context) string { return c.GetHeader("X-Test-User") }

// request is a produce request by user (a header) to path.
func request(user, path string, body io.Reader) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, body)
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	return req
}

func (e *limitEnv) serve(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.engine.ServeHTTP(rec, req)
	return rec
}

// inFlight serves req in the background and returns its answer's channel.
func (e *limitEnv) inFlight(req *http.Request) <-chan *httptest.ResponseRecorder {
	done := make(chan *httptest.ResponseRecorder, 1)
	e.pending.Add(1)
	go func() {
		defer e.pending.Done()
		done <- e.serve(req)
	}()
	return done
}

// held serves req in the background and waits until its records are held
// in the WAL: from then on it is in flight.
func (e *limitEnv) held(t *testing.T, req *http.Request) <-chan *httptest.ResponseRecorder {
	t.Helper()
	done := e.inFlight(req)
	select {
	case <-e.wal.entered:
	case rec := <-done:
		t.Fatalf("the held request was answered: %d %s", rec.Code, rec.Body.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the held request never reached the WAL")
	}
	return done
}

func answer(t *testing.T, done <-chan *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	t.Helper()
	select {
	case rec := <-done:
		return rec
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	return nil
}

// stringBatch is a batch body of the given payloads (each sent as a JSON string).
func stringBatch(payloads ...string) string {
	msgs := make([]string, len(payloads))
	for i, p := range payloads {
		msgs[i] = fmt.Sprintf(`{"payload":%q}`, p)
	}
	return `{"messages":[` + strings.Join(msgs, ",") + `]}`
}

// batchOfSize is a batch body of exactly n bytes whose payloads are
// strings under 1 MiB, each starting with tag.
func batchOfSize(tag string, n int) []byte {
	const head, tail, overhead = `{"messages":[`, `]}`, len(`{"payload":""}`)
	rest := n - len(head) - len(tail)
	k := rest/(700<<10) + 1
	total := rest - (k - 1) - overhead*k
	payloads := make([]string, k)
	for i := range payloads {
		size := total / k
		if i == 0 {
			size += total % k
		}
		payloads[i] = tag + strings.Repeat("x", size-len(tag))
	}
	body := []byte(stringBatch(payloads...))
	if len(body) != n {
		panic(fmt.Sprintf("batchOfSize(%d) built %d bytes", n, len(body)))
	}
	return body
}

const msg429Limit2 = `{"error":"too many in-flight produce requests for this identity (limit 2 per node)"}` + "\n"

// ensure that with http.max_produce_in_flight_per_identity 2 and two
// produces of one user in flight, a third single or batch produce by that
// user is 429 with the spec's message and stores nothing, another user is
// not held back, and the slots come back once the two are answered
// (api.md §0.8, §2.13 429 row, §2.13.1; the produce analogue of
// conformance 164).
func TestProduceCapPerIdentity(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxInFlightPerIdentity: 2, Identity: byUser})
	first := e.held(t, request("ann", "/v1/topics/t/produce", strings.NewReader(holdTag)))
	second := e.held(t, request("ann", "/v1/topics/t/produce", strings.NewReader(holdTag)))
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce", strings.NewReader("m"))), 429, msg429Limit2)
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce/batch", strings.NewReader(stringBatch("m")))), 429, msg429Limit2)
	wantAnswer(t, e.serve(request("bob", "/v1/topics/t/produce", strings.NewReader("m"))), 202, "")
	if n := e.wal.DurableNext(); n != 1 {
		t.Fatalf("%d records stored while two are held, want bob's 1", n)
	}
	e.wal.open()
	wantAnswer(t, answer(t, first), 202, "")
	wantAnswer(t, answer(t, second), 202, "")
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce", strings.NewReader("m"))), 202, "")
}

// ensure that a batch counts as its message count clamped to the cap: with
// a cap of 5 and a batch of three in flight, a batch of ten (counting 5) is
// 429, a single produce and a batch of two fit, and a batch of ten alone
// is accepted (api.md §0.8, §2.13.1 429 row; the produce analogue of
// conformance 165).
func TestProduceCapCountsBatchMessages(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxInFlightPerIdentity: 5, Identity: byUser})
	held := e.held(t, request("ann", "/v1/topics/t/produce/batch", strings.NewReader(stringBatch(holdTag, "a", "b"))))
	ten := stringBatch(strings.Split("0123456789", "")...)
	rec := e.serve(request("ann", "/v1/topics/t/produce/batch", strings.NewReader(ten)))
	wantAnswer(t, rec, 429, `{"error":"too many in-flight produce requests for this identity (limit 5 per node)"}`+"\n")
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce", strings.NewReader("m"))), 202, "")
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce/batch", strings.NewReader(stringBatch("a", "b")))), 202, "{\"accepted\":2}\n")
	if n := e.wal.DurableNext(); n != 3 {
		t.Fatalf("%d records stored, want 3 (the refused batch stores nothing)", n)
	}
	e.wal.open()
	wantAnswer(t, answer(t, held), 202, "{\"accepted\":3}\n")
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce/batch", strings.NewReader(ten))), 202, "{\"accepted\":10}\n")
}

// ensure that a batch counts as one while its body is read and as its
// message count once decoded: with a cap of 2, a batch whose body is still
// arriving and one held produce fill the cap (a third produce is 429), and
// once the body ends with two messages the batch no longer fits and is
// 429 itself, storing nothing (api.md §0.8, internals.md §10.4).
func TestProduceCapCountsBatchAsOneWhileReading(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxInFlightPerIdentity: 2, Identity: byUser})
	pr, pw := io.Pipe()
	batch := e.inFlight(request("ann", "/v1/topics/t/produce/batch", pr))
	if _, err := pw.Write([]byte(`{"messages":[`)); err != nil { // returns once the handler read it
		t.Fatal(err)
	}
	held := e.held(t, request("ann", "/v1/topics/t/produce", strings.NewReader(holdTag)))
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce", strings.NewReader("m"))), 429, msg429Limit2)
	if _, err := io.WriteString(pw, `{"payload":1},{"payload":2}]}`); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	wantAnswer(t, answer(t, batch), 429, msg429Limit2)
	e.wal.open()
	wantAnswer(t, answer(t, held), 202, "")
	if n := e.wal.DurableNext(); n != 1 {
		t.Fatalf("%d records stored, want the single produce's 1", n)
	}
}

// ensure that without an Identity function the cap counts by client IP
// (api.md §0.8: the client IP while security is off; a user header is not
// an identity then), and that a refused or failed produce gives its slot
// back.
func TestProduceCapByClientIP(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{MaxInFlightPerIdentity: 1})
	from := func(ip, path, body string) *http.Request {
		req := request("", path, strings.NewReader(body))
		req.RemoteAddr = ip + ":40000"
		return req
	}
	wantAnswer(t, e.serve(from("192.0.2.1", "/v1/topics/missing/produce", "m")), 404, `{"error":"topic not found"}`+"\n")
	wantAnswer(t, e.serve(from("192.0.2.1", "/v1/topics/t/produce/batch", `{"messages":[]}`)), 400, `{"error":"messages required"}`+"\n")
	held := e.held(t, from("192.0.2.1", "/v1/topics/t/produce", holdTag))
	same := from("192.0.2.1", "/v1/topics/t/produce", "m")
	same.Header.Set("X-Test-User", "someone-else")
	wantAnswer(t, e.serve(same), 429, `{"error":"too many in-flight produce requests for this identity (limit 1 per node)"}`+"\n")
	wantAnswer(t, e.serve(from("198.51.100.7", "/v1/topics/t/produce", "m")), 202, "")
	e.wal.open()
	wantAnswer(t, answer(t, held), 202, "")
}

// ensure that with the cap off (ProduceRoutes, the default 0) one client
// may have any number of produces in flight (api.md §6.1).
func TestProduceCapOff(t *testing.T) {
	e := newLimitEnv(t, ProduceLimits{})
	var held []<-chan *httptest.ResponseRecorder
	for range 3 {
		held = append(held, e.held(t, request("ann", "/v1/topics/t/produce", strings.NewReader(holdTag))))
	}
	wantAnswer(t, e.serve(request("ann", "/v1/topics/t/produce", strings.NewReader("m"))), 202, "")
	e.wal.open()
	for _, done := range held {
		wantAnswer(t, answer(t, done), 202, "")
	}
}

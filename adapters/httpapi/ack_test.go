package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/meta"
)

// lease consumes one message of topic (pinned when partition >= 0) and
// returns its handle.
func (f *consumeFixture) lease(topic string, partition int) string {
	f.t.Helper()
	target := "/v1/topics/" + topic + "/consume"
	if partition >= 0 {
		target += fmt.Sprintf("?partition=%d", partition)
	}
	env := envelopeOf(f.t, f.get(target))
	return *env.ReceiptHandle
}

func (f *consumeFixture) batchAck(topic, query, body string) *httptest.ResponseRecorder {
	return f.do(http.MethodPost, "/v1/topics/"+topic+"/ack"+query, body, "Content-Type", "application/json")
}

func handlesBody(hs ...string) string {
	b, _ := json.Marshal(ackBatchBody{ReceiptHandles: hs})
	return string(b)
}

// ensure that single acks answer 204 with no body, settle for good in any
// order, and answer the spec's refusals (conformance 119-124, 130, 154).
func TestSingleAck(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.topic("other", 1, nil)
	f.produce(tp, 0, "0", "1", "2")
	h0, h1 := f.lease("orders", 0), f.lease("orders", 0)

	rec := f.do(http.MethodPost, "/v1/topics/orders/ack?receipt_handle="+h1, "")
	wantError(t, rec, 415, msg415) // 154: the lease stays live
	wantError(t, f.ack("other", h1, ""), 410, "receipt handle no longer matches an active reservation")
	if rec := f.do(http.MethodPost, "/v1/topics/orders/ack?receipt_handle="+h1, "", clientHeader, "x"); rec.Code != 204 || rec.Body.Len() != 0 {
		t.Fatalf("ack with X-Narad-Client: %d %q", rec.Code, rec.Body.String())
	}
	if rec := f.ack("orders", url.QueryEscape(h0), "&unknown=1"); rec.Code != 204 {
		t.Fatalf("URL-encoded handle: %d %s", rec.Code, rec.Body.String())
	}
	wantError(t, f.ack("orders", h0, ""), 410, "receipt handle no longer matches an active reservation")
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume")); env.Offset != 2 {
		t.Fatalf("after acking 1 then 0 got offset %d", env.Offset)
	}
	wantError(t, f.do(http.MethodPost, "/v1/topics/orders/ack", "", "Content-Type", "application/json"), 400, "receipt_handle required")
	wantError(t, f.ack("orders", "", ""), 400, "receipt_handle required")
	wantError(t, f.ack("orders", "not-a-handle", ""), 400, "receipt handle is malformed")
	if rec := f.ack("orders", "%zz", ""); rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid receipt_handle: ") {
		t.Fatalf("bad escape: %d %s", rec.Code, rec.Body.String())
	}
	wantError(t, f.ack("gone", h0, ""), 404, "topic not found")
}

// ensure that extend and nack work through the query, and that bad extend
// values are refused (conformance 126, 128, 129).
func TestExtendAndNackRoutes(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 3000 })
	f.produce(tp, 0, "only")
	h := f.lease("orders", 0)
	wantError(t, f.ack("orders", h, "&extend=later"), 400, `invalid extend: want "true" (renew lease) or "0" (release for redelivery)`)
	f.clock.Advance(1500 * time.Millisecond)
	if rec := f.ack("orders", h, "&extend=1"); rec.Code != 204 {
		t.Fatalf("extend=1: %d", rec.Code)
	}
	f.clock.Advance(2100 * time.Millisecond)
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	if rec := f.ack("orders", h, "&extend=0"); rec.Code != 204 {
		t.Fatalf("extend=0: %d", rec.Code)
	}
	again := f.lease("orders", -1)
	if again == h || !strings.HasPrefix(again, "0:0:") {
		t.Fatalf("nack redelivery %q after %q", again, h)
	}
	wantError(t, f.ack("orders", h, ""), 410, "receipt handle no longer matches an active reservation")
	if rec := f.ack("orders", again, "&extend=false"); rec.Code != 204 {
		t.Fatalf("extend=false acks: %d", rec.Code)
	}
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
}

// ensure that with the acked-ahead set at its cap acks are still accepted
// and only the frontier may be handed out (conformance 125).
func TestAckedAheadCapRoute(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, func(c *meta.CreateTopic) { c.MaxAckedAhead = 2 })
	f.produce(tp, 0, "0", "1", "2", "3", "4")
	var hs []string
	for range 4 {
		hs = append(hs, f.lease("orders", 0))
	}
	for _, h := range hs[1:] {
		if rec := f.ack("orders", h, ""); rec.Code != 204 {
			t.Fatalf("ack ahead of the frontier: %d %s", rec.Code, rec.Body.String())
		}
	}
	wantEmpty(t, f.get("/v1/topics/orders/consume?partition=0"))
	if rec := f.ack("orders", hs[0], ""); rec.Code != 204 {
		t.Fatal(rec.Code)
	}
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume?partition=0")); env.Offset != 4 {
		t.Fatalf("got %d, want 4", env.Offset)
	}
}

// ensure that a batch ack answers 200 with one result per handle in order,
// a malformed handle earning its own 400 (conformance 217, 218, 220).
func TestBatchAck(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.produce(tp, 0, "0", "1", "2", "3", "4")
	h1, h2 := f.lease("orders", 0), f.lease("orders", 0)
	if rec := f.ack("orders", h1, ""); rec.Code != 204 {
		t.Fatal(rec.Code)
	}
	rec := f.batchAck("orders", "", handlesBody(h2, "not-a-handle", h1))
	want := `{"results":[{"status":204},{"status":400,"error":"receipt handle is malformed"},{"status":410,"error":"receipt handle no longer matches an active reservation"}]}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
	h3, h4 := f.lease("orders", 0), f.lease("orders", 0)
	rec = f.batchAck("orders", "?extend=0", handlesBody(h3, h4))
	if rec.Code != 200 || rec.Body.String() != `{"results":[{"status":204},{"status":204}]}`+"\n" {
		t.Fatalf("nack batch: %d %q", rec.Code, rec.Body.String())
	}
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume?partition=0")); env.Offset != 2 {
		t.Fatalf("after a batch nack got %d, want 2", env.Offset)
	}
}

// ensure that a batch ack with extend=true renews every lease (conformance 219).
func TestBatchAckExtend(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 1000 })
	f.produce(tp, 0, "0", "1")
	h0, h1 := f.lease("orders", 0), f.lease("orders", 0)
	f.clock.Advance(800 * time.Millisecond)
	rec := f.batchAck("orders", "?extend=true", handlesBody(h0, h1))
	if rec.Body.String() != `{"results":[{"status":204},{"status":204}]}`+"\n" {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	f.clock.Advance(800 * time.Millisecond)
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
}

// ensure that whole-request failures of a batch ack answer as api.md
// §2.15.1 says (conformance 221, 222, 223).
func TestBatchAckRefusals(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	f.topic("orders", 1, nil)
	wantError(t, f.batchAck("orders", "", `{"receipt_handles":[]}`), 400, "receipt_handles required")
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("0:%d:1", i)
	}
	wantError(t, f.batchAck("orders", "", handlesBody(many...)), 400, "too many receipt_handles: more than 100 (max 100)")
	huge := `{"receipt_handles":["` + strings.Repeat("1", 65536) + `"]}`
	wantError(t, f.batchAck("orders", "", huge), 413, "request body too large")
	if rec := f.batchAck("orders", "", `{"receipt_handles":"x"}`); rec.Code != 400 || !strings.HasPrefix(errorMessage(t, rec), "invalid json: ") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	wantError(t, f.batchAck("orders", "", `{"receipt_handles":["0:0:1"],"garbage":1}`), 400, `invalid json: json: unknown field "garbage"`)
	wantError(t, f.batchAck("orders", "", `{"receipt_handles":["0:0:1"]} {}`), 400, "invalid json: multiple JSON values")
	wantError(t, f.batchAck("missing", "", handlesBody("0:0:1")), 404, "topic not found")
	wantError(t, f.do(http.MethodPost, "/v1/topics/orders/ack", handlesBody("0:0:1")), 415, msg415)
}

func errorMessage(t testing.TB, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("error body %q: %v", rec.Body.String(), err)
	}
	return body.Error
}

// FuzzBatchAckBody feeds arbitrary bodies to the batch ack decoder: it must
// never panic, must accept only 1..100 handles, and must refuse with a 400
// client error whose message is one of the spec's.
func FuzzBatchAckBody(f *testing.F) {
	f.Add([]byte(`{"receipt_handles":["0:0:1","1:2:3"]}`))
	f.Add([]byte(`{"receipt_handles":[]}`))
	f.Add([]byte(`{"receipt_handles":"x"}`))
	f.Add([]byte(`{"receipt_handles":["0:0:1"]} {}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		hs, err := decodeAckBatch(body)
		if err == nil {
			if len(hs) < 1 || len(hs) > ackBatchHandlesMax {
				t.Fatalf("accepted %d handles", len(hs))
			}
			return
		}
		var ce *clientError
		if !errors.As(err, &ce) || ce.status != http.StatusBadRequest {
			t.Fatalf("refusal %v is not a 400 client error", err)
		}
		if !strings.HasPrefix(ce.msg, "invalid json: ") && ce.msg != "receipt_handles required" && !strings.HasPrefix(ce.msg, "too many receipt_handles") {
			t.Fatalf("unexpected message %q", ce.msg)
		}
	})
}

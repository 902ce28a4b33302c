package httpapi

import (
	"net/http"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
)

// ensure that a nack carrying delay_ms (api-extensions.md "Nack with a
// delay") answers 204, kills the handle, and holds the message until the
// delay is over, single and batch.
func TestNackWithDelayRoute(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.produce(tp, 0, "0", "1")
	h0, h1 := f.lease("orders", 0), f.lease("orders", 0)
	if rec := f.ack("orders", h0, "&extend=0&delay_ms=2000"); rec.Code != 204 || rec.Body.Len() != 0 {
		t.Fatalf("single: %d %q", rec.Code, rec.Body.String())
	}
	wantError(t, f.ack("orders", h0, ""), 410, "receipt handle no longer matches an active reservation")
	rec := f.batchAck("orders", "?delay_ms=5000&extend=0", handlesBody(h1, h0))
	want := `{"results":[{"status":204},{"status":410,"error":"receipt handle no longer matches an active reservation"}]}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("batch: %d %q", rec.Code, rec.Body.String())
	}
	f.clock.Advance(1999 * time.Millisecond)
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	f.clock.Advance(time.Millisecond)
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume")); env.Offset != 0 {
		t.Fatalf("after 2 s got offset %d, want 0", env.Offset)
	}
	f.clock.Advance(2999 * time.Millisecond)
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	f.clock.Advance(time.Millisecond)
	if env := envelopeOf(t, f.get("/v1/topics/orders/consume")); env.Offset != 1 {
		t.Fatalf("after 5 s got offset %d, want 1", env.Offset)
	}
}

// ensure that a bad delay_ms is a 400 that names the rule, and that the
// lease stands after each refusal.
func TestNackDelayRefusals(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.produce(tp, 0, "only")
	h := f.lease("orders", 0)
	const bad = "invalid delay_ms: want an integer from 0 to 43200000 (milliseconds)"
	for _, q := range []string{"&extend=0&delay_ms=-1", "&extend=0&delay_ms=43200001", "&extend=0&delay_ms=1s", "&extend=0&delay_ms="} {
		wantError(t, f.ack("orders", h, q), 400, bad)
	}
	for _, q := range []string{"&delay_ms=10", "&extend=true&delay_ms=10"} {
		wantError(t, f.ack("orders", h, q), 400, "delay_ms applies to a nack only (extend=0)")
	}
	wantError(t, f.ack("orders", h, "&extend=0&delay_ms=1&delay_ms=2"), 400, "duplicate delay_ms query parameter")
	wantError(t, f.batchAck("orders", "?delay_ms=5", handlesBody(h)), 400, "delay_ms applies to a nack only (extend=0)")
	if rec := f.ack("orders", h, "&extend=0&delay_ms=43200000"); rec.Code != 204 {
		t.Fatalf("the maximum: %d %s", rec.Code, rec.Body.String())
	}
	if rec := f.do(http.MethodPost, "/v1/topics/orders/ack?receipt_handle="+h, "", clientHeader, "x"); rec.Code != 410 {
		t.Fatalf("after the nack the handle answers %d", rec.Code)
	}
}

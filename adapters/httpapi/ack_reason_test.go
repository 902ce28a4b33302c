package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// ensure that a nack's reason (api-extensions.md "Nack with a delay or a
// reason"), single and batch and with delay_ms, answers 204 and is what
// the dead letter carries: the last one given.
func TestNackWithReasonRoute(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.propose(&meta.SetTopicDeadLetter{Name: tp.Name, ID: tp.ID, DeadLetter: &meta.DeadLetter{Topic: "orders-dlq", MaxReceiveCount: 3}})
	f.produce(tp, 0, "poison")
	if rec := f.ack("orders", f.lease("orders", 0), "&extend=0&reason=first+try"); rec.Code != 204 || rec.Body.Len() != 0 {
		t.Fatalf("single: %d %q", rec.Code, rec.Body.String())
	}
	rec := f.batchAck("orders", "?extend=0&delay_ms=1000&reason="+url.QueryEscape("schema: ünknown field & more"), handlesBody(f.lease("orders", 0)))
	if want := `{"results":[{"status":204}]}` + "\n"; rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("batch: %d %q", rec.Code, rec.Body.String())
	}
	f.clock.Advance(time.Second)
	if rec := f.ack("orders", f.lease("orders", 0), "&extend=0"); rec.Code != 204 {
		t.Fatalf("plain nack: %d %q", rec.Code, rec.Body.String())
	}
	wantEmpty(t, f.get("/v1/topics/orders/consume"))
	deadline := time.Now().Add(5 * time.Second)
	for len(f.sink.Letters()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	ls := f.sink.Letters()
	if len(ls) != 1 {
		t.Fatalf("%d dead letters", len(ls))
	}
	l, err := deadletter.ParseLetter(ls[0].Payload)
	if err != nil || l.Reason != "schema: ünknown field & more" || l.ReceiveCount != 3 {
		t.Fatalf("letter %+v %v", l, err)
	}
}

// ensure that a bad reason is a 400 that names the rule, single and
// batch, and that the lease stands after each refusal.
func TestNackReasonRefusals(t *testing.T) {
	t.Parallel()
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("orders", 1, nil)
	f.produce(tp, 0, "only")
	h := f.lease("orders", 0)
	const bad = "invalid reason: want 1 to 1024 bytes of UTF-8"
	tooLong := strings.Repeat("x", deadletter.ReasonBytesMax+1)
	for _, q := range []string{"&extend=0&reason=", "&extend=0&reason=%FF", "&extend=0&reason=" + tooLong, "&reason=", "&extend=true&reason=" + tooLong} {
		wantError(t, f.ack("orders", h, q), 400, bad)
	}
	for _, q := range []string{"&reason=x", "&extend=true&reason=x", "&extend=false&reason=x"} {
		wantError(t, f.ack("orders", h, q), 400, "reason applies to a nack only (extend=0)")
	}
	wantError(t, f.ack("orders", h, "&extend=0&reason=a&reason=b"), 400, "duplicate reason query parameter")
	wantError(t, f.batchAck("orders", "?reason=x", handlesBody(h)), 400, "reason applies to a nack only (extend=0)")
	wantError(t, f.batchAck("orders", "?extend=0&reason=%C3", handlesBody(h)), 400, bad)
	wantError(t, f.batchAck("orders", "?extend=0&reason=x&reason=x", handlesBody(h)), 400, "duplicate reason query parameter")
	if rec := f.ack("orders", h, ""); rec.Code != 204 {
		t.Fatalf("the lease after the refusals: %d %s", rec.Code, rec.Body.String())
	}
}

// ensure that parseNackReason reads what a client escapes and takes the
// longest reason.
func TestParseNackReason(t *testing.T) {
	t.Parallel()
	longest := strings.Repeat("é", deadletter.ReasonBytesMax/2)
	for raw, want := range map[string]string{
		"":                                   "",
		"reason=a+b%26c":                     "a b&c",
		"reason=" + url.QueryEscape(longest): longest,
		"delay_ms=5&reason=x":                "x",
	} {
		q, err := parseQuery("extend=0&" + raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := parseNackReason(q, opNack); err != nil || got != want {
			t.Fatalf("%q: %q %v, want %q", raw, got, err, want)
		}
	}
}

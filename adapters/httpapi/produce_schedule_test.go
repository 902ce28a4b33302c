package httpapi

import (
	"net/http"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that a single produce takes delay_ms or deliver_at_ms and stores
// the deliver-at, and that every malformed schedule is a 400 naming the
// field, with nothing stored (issue 19: per-message delay).
func TestProduceSchedule(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	now := p.clock.Now().UnixMilli()
	wantAnswer(t, p.post("/v1/topics/t/produce?delay_ms=1500", []byte("a")), http.StatusAccepted, "")
	wantAnswer(t, p.post("/v1/topics/t/produce?deliver_at_ms=1800000000000&key=k", []byte("b")), http.StatusAccepted, "")
	wantAnswer(t, p.post("/v1/topics/t/produce?delay_ms=0", []byte("c")), http.StatusAccepted, "")
	got := p.stored(t)
	if len(got) != 3 || got[0].DeliverAtMs != now+1500 || got[1].DeliverAtMs != 1_800_000_000_000 || got[2].DeliverAtMs != 0 || string(got[1].Key) != "k" {
		t.Fatalf("stored %+v", got)
	}
	for q, msg := range map[string]string{
		"delay_ms=-1":                   "invalid delay_ms: want an integer from 0 to 253402300799999 (milliseconds)",
		"delay_ms=1.5":                  "invalid delay_ms: want an integer of milliseconds",
		"delay_ms=1&delay_ms=2":         "duplicate delay_ms query parameter",
		"deliver_at_ms=x":               "invalid deliver_at_ms: want an integer of milliseconds",
		"deliver_at_ms=253402300800000": "invalid deliver_at_ms: want an integer from 0 to 253402300799999 (unix milliseconds)",
		"delay_ms=1&deliver_at_ms=2":    "delay_ms and deliver_at_ms exclude each other",
	} {
		wantAnswer(t, p.post("/v1/topics/t/produce?"+q, []byte("x")), http.StatusBadRequest, errBody(msg))
	}
	if n := len(p.stored(t)); n != 3 {
		t.Fatalf("a refused produce stored something: %d records", n)
	}
	p.propose(t, &meta.CreateTopic{Name: "hour", ID: "00000000000000aa", Partitions: 3, VisibilityTimeoutMs: 30_000, RetentionMs: 3_600_000})
	wantAnswer(t, p.post("/v1/topics/hour/produce?delay_ms=3600000", []byte("x")), http.StatusAccepted, "")
	wantAnswer(t, p.post("/v1/topics/hour/produce?delay_ms=3600001", []byte("x")), http.StatusBadRequest,
		errBody("delivery 3600001 ms from now is beyond what the topic keeps (retention 3600000 ms)"))
}

// Ensure that a batch produce takes delay_ms and deliver_at_ms per message,
// refuses them in the query, and refuses a bad one with its index.
func TestProduceBatchSchedule(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	now := p.clock.Now().UnixMilli()
	body := `{"messages":[{"payload":"a","delay_ms":2000},{"payload":"b"},{"payload":"c","deliver_at_ms":1800000000000}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(body)), http.StatusAccepted, `{"accepted":3}`+"\n")
	got := p.stored(t)
	if len(got) != 3 || got[0].DeliverAtMs != now+2000 || got[1].DeliverAtMs != 0 || got[2].DeliverAtMs != 1_800_000_000_000 {
		t.Fatalf("stored %+v", got)
	}
	wantAnswer(t, p.post("/v1/topics/t/produce/batch?delay_ms=5", []byte(body)), http.StatusBadRequest,
		errBody("delay_ms is set per message in a batch produce, not as a query parameter"))
	bad := `{"messages":[{"payload":"a"},{"payload":"b","delay_ms":1,"deliver_at_ms":2}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(bad)), http.StatusBadRequest,
		errBody("message 1: delay_ms and deliver_at_ms exclude each other"))
	neg := `{"messages":[{"payload":"a","delay_ms":-3}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(neg)), http.StatusBadRequest,
		errBody("message 0: invalid delay_ms: want an integer from 0 to 253402300799999 (milliseconds)"))
	if n := len(p.stored(t)); n != 3 {
		t.Fatalf("a refused batch stored something: %d records", n)
	}
}

package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
)

// BenchmarkConsumeHandler measures one queue consume and one ack through
// the gin engine and the real use case on fakes.
func BenchmarkConsumeHandler(b *testing.B) {
	f := newConsumeFixture(b, 10*time.Second, consume.Options{})
	tp := f.topic("bench", 1, nil)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = `{"order_id":"ord_123","amount":42}`
	}
	for range (b.N + 999) / 1000 {
		f.produce(tp, 0, batch...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := f.get("/v1/topics/bench/consume")
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
		var env struct {
			ReceiptHandle string `json:"receipt_handle"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &env)
		if rec := f.ack("bench", env.ReceiptHandle, ""); rec.Code != http.StatusNoContent {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "consume+ack/s")
}

// BenchmarkBatchConsumeHandler measures one batch consume of 100 messages
// of 256 bytes and the batch ack of their handles through the gin engine
// and the real use case on fakes; the answer's rendering buffer is what
// the bytes per operation show of the consume.
func BenchmarkBatchConsumeHandler(b *testing.B) {
	f := newConsumeFixture(b, 10*time.Second, consume.Options{})
	tp := f.topic("bench", 1, nil)
	batch := make([]string, 1000)
	for i := range batch {
		batch[i] = `"` + strings.Repeat("p", 254) + `"`
	}
	for range (b.N*100 + 999) / 1000 {
		f.produce(tp, 0, batch...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := f.get("/v1/topics/bench/consume?max=100", clientHeader, "bench")
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
		var answer struct {
			Messages []struct {
				ReceiptHandle string `json:"receipt_handle"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &answer)
		handles := make([]string, len(answer.Messages))
		for i, m := range answer.Messages {
			handles[i] = m.ReceiptHandle
		}
		if rec := f.batchAck("bench", "", handlesBody(handles...)); rec.Code != http.StatusOK {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}

// ensure that answers rendered into reused buffers carry their own bytes
// only: a small answer after a large one has no tail of the large one, and
// a large answer after a small one is whole.
func TestConsumeAnswersDoNotShareBuffers(t *testing.T) {
	f := newConsumeFixture(t, 10*time.Second, consume.Options{})
	tp := f.topic("reuse", 1, nil)
	big, small := `"`+strings.Repeat("b", 4000)+`"`, `"s"`
	f.produce(tp, 0, big, small, small, big)
	for i, want := range []string{big, small} {
		if env := envelopeOf(t, f.get("/v1/topics/reuse/consume")); string(env.Payload) != want {
			t.Fatalf("single answer %d: payload %.40q…", i, env.Payload)
		}
	}
	rec := f.get("/v1/topics/reuse/consume?max=10", clientHeader, "t")
	var answer struct {
		Messages []wireEnvelope `json:"messages"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || len(answer.Messages) != 2 ||
		string(answer.Messages[0].Payload) != small || string(answer.Messages[1].Payload) != big {
		t.Fatalf("batch answer after singles: %v, %.80q", err, rec.Body.String())
	}
}

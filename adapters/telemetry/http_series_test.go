package telemetry

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// ensure that the cached request series count every request under its own
// key, that a route which never carried a body has no byte series, and
// that one that did has exactly its bytes.
func TestHTTPRequestSeriesPerKey(t *testing.T) {
	m := NewMetrics()
	const produce, health = "POST /v1/topics/{topic}/produce", "GET /healthz"
	for range 3 {
		m.HTTPRequest(produce, "POST", 202, time.Millisecond, 100, 0)
		m.HTTPRequest(health, "GET", 200, time.Millisecond, 0, 15)
	}
	m.HTTPRequest(produce, "POST", 400, time.Millisecond, 7, 30)
	for _, c := range []struct {
		route, method, status string
		want                  float64
	}{{produce, "POST", "202", 3}, {produce, "POST", "400", 1}, {health, "GET", "200", 3}} {
		if n := testutil.ToFloat64(m.httpRequests.WithLabelValues(c.route, c.method, c.status)); n != c.want {
			t.Fatalf("%s %s: %v requests, want %v", c.route, c.status, n, c.want)
		}
	}
	if n := testutil.ToFloat64(m.httpBytesIn.WithLabelValues(produce)); n != 307 {
		t.Fatalf("produce bytes in %v, want 307", n)
	}
	if n := testutil.ToFloat64(m.httpBytesOut.WithLabelValues(produce)); n != 30 {
		t.Fatalf("produce bytes out %v, want 30", n)
	}
	if n := testutil.CollectAndCount(m.httpBytesIn); n != 1 {
		t.Fatalf("%d bytes-in series, want 1 (produce only: health carried none)", n)
	}
}

// BenchmarkHTTPRequest is the per-request metrics cost of a hot route.
func BenchmarkHTTPRequest(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.HTTPRequest("POST /v1/topics/{topic}/produce", "POST", 202, time.Millisecond, 256, 0)
	}
}

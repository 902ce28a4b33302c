package httpapi

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

type seen struct {
	mu    sync.Mutex
	lines []string
	in    int
}

func (s *seen) HTTPRequest(route, method string, status int, _ time.Duration, _, _ int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, route+" "+method+" "+strconv.Itoa(status))
}
func (s *seen) HTTPInFlight(d int) { s.mu.Lock(); s.in += d; s.mu.Unlock() }

// ensure that requests are recorded by route pattern, never by URL, and unmatched paths as "unmatched".
func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	m := &seen{}
	e := NewEngineWith(EngineOptions{Log: zap.NewNop(), Metrics: m},
		Route{Method: "GET", Path: "/v1/topics/:topic", Handle: func(c *gin.Context) { c.Status(200) }})
	serve(e, "GET", "/v1/topics/orders", nil)
	serve(e, "GET", "/nowhere", nil)
	want := []string{"GET /v1/topics/{topic} GET 200", "unmatched GET 404"}
	if strings.Join(m.lines, "|") != strings.Join(want, "|") || m.in != 0 {
		t.Fatalf("recorded %v (in flight %d)", m.lines, m.in)
	}
}

// ensure that /metrics serves the registry's exposition.
func TestMetricsRoute(t *testing.T) {
	r := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "narad_probe_total", Help: "probe"})
	r.MustRegister(c)
	c.Inc()
	rec := serve(NewEngine(zap.NewNop(), MetricsRoute(r)), "GET", "/metrics", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "narad_probe_total 1") {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

package httpapi

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// statusClientClosed is recorded when the client went away before the
// answer (api.md §7: status="499").
const statusClientClosed = 499

// HTTPMetrics records requests; adapters/telemetry implements it.
type HTTPMetrics interface {
	HTTPRequest(route, method string, status int, d time.Duration, bytesIn, bytesOut int64)
	HTTPInFlight(delta int)
}

// observe records each request under its route pattern ("GET
// /v1/topics/{topic}", or "unmatched"), never its URL.
func observe(m HTTPMetrics) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		m.HTTPInFlight(1)
		defer m.HTTPInFlight(-1)
		c.Next()
		status := c.Writer.Status()
		if c.Request.Context().Err() != nil && !c.Writer.Written() {
			status = statusClientClosed
		}
		out := int64(c.Writer.Size())
		m.HTTPRequest(routeLabel(c), c.Request.Method, status, time.Since(start), max(c.Request.ContentLength, 0), max(out, 0))
	}
}

// routeLabel is the request's route label, formatted once per route.
func routeLabel(c *gin.Context) string {
	p := c.FullPath()
	if p == "" {
		return "unmatched"
	}
	key := routeKey{method: c.Request.Method, path: p}
	if l, ok := routeLabels.Load(key); ok {
		return l.(string)
	}
	l := formatRouteLabel(key)
	routeLabels.Store(key, l)
	return l
}

// routeKey is a matched route: its method and gin path pattern.
type routeKey struct{ method, path string }

// routeLabels caches routeKey → label; the keys are the engine's routes.
var routeLabels sync.Map

// formatRouteLabel writes gin's ":param" segments as "{param}".
func formatRouteLabel(k routeKey) string {
	parts := strings.Split(k.path, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return k.method + " " + strings.Join(parts, "/")
}

// MetricsRoute serves the Prometheus exposition of g at /metrics (api.md
// §2.3); a failing collector does not fail the scrape.
func MetricsRoute(g prometheus.Gatherer) Route {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return Route{Method: http.MethodGet, Path: "/metrics", Handle: gin.WrapH(h)}
}

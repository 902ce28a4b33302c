package telemetry

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// httpKey names one request series: route pattern, method and status.
type httpKey struct {
	route, method string
	status        int
}

// httpSeries are one key's resolved series. Resolving a labelled series
// hashes its label values on every call; a node answers thousands of
// requests a second over a few dozen keys, so each key is resolved once.
// The byte counters are resolved on first use only, so a route that never
// carried a body shows no byte series, as before the cache.
type httpSeries struct {
	route    string
	requests prometheus.Counter
	duration prometheus.Observer
	in, out  atomic.Pointer[counterRef]
}

// counterRef holds a resolved counter for an atomic pointer.
type counterRef struct{ prometheus.Counter }

// counter returns the counter in p, resolving it from vec on first use.
func (s *httpSeries) counter(p *atomic.Pointer[counterRef], vec *prometheus.CounterVec) prometheus.Counter {
	if r := p.Load(); r != nil {
		return r.Counter
	}
	r := &counterRef{vec.WithLabelValues(s.route)}
	p.CompareAndSwap(nil, r)
	return r.Counter
}

// httpSeriesCache maps httpKey to *httpSeries. The key set is bounded by
// the routes, methods and statuses the API answers with.
type httpSeriesCache struct{ m sync.Map }

// get returns key's series, resolving them on first use.
func (c *httpSeriesCache) get(m *Metrics, key httpKey) *httpSeries {
	if s, ok := c.m.Load(key); ok {
		return s.(*httpSeries)
	}
	status := strconv.Itoa(key.status)
	s := &httpSeries{
		route:    key.route,
		requests: m.httpRequests.WithLabelValues(key.route, key.method, status),
		duration: m.httpDuration.WithLabelValues(key.route, key.method, status),
	}
	actual, _ := c.m.LoadOrStore(key, s)
	return actual.(*httpSeries)
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The metadata availability probe of the failover scenarios: topic
// creates sent at a steady pace while a node is killed, each one's
// outcome recorded with when it was sent and when it ended.

// metaProbeInterval spaces the probe's topic creates; metaProbeTimeout
// bounds each one.
const (
	metaProbeInterval = 100 * time.Millisecond
	metaProbeTimeout  = 8 * time.Second
)

// probeResult is one metadata write: when it was sent, when it ended, and
// its outcome (status 201, an error status, or 0 for a transport failure).
type probeResult struct {
	start, end time.Time
	status     int
	err        error
}

// metaProbe measures metadata availability: it creates a small topic every
// metaProbeInterval through the nodes given (in turn), each create on its
// own goroutine, and records how each ended.
type metaProbe struct {
	mu      sync.Mutex
	results []probeResult
	stop    chan struct{}
	wg      sync.WaitGroup
}

func startMetaProbe(t *testing.T, prefix string, via []*node) *metaProbe {
	t.Helper()
	p := &metaProbe{stop: make(chan struct{})}
	clients := make([]*httpclient.Client, len(via))
	for i, n := range via {
		c, err := httpclient.New(httpclient.Options{Servers: []string{n.url}, ClientName: "narad-e2e-probe", Timeout: metaProbeTimeout})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(metaProbeInterval)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			p.wg.Add(1)
			go p.create(clients[i%len(clients)], fmt.Sprintf("%s-%04d", prefix, i))
		}
	}()
	t.Cleanup(p.halt)
	return p
}

func (p *metaProbe) create(c *httpclient.Client, name string) {
	defer p.wg.Done()
	r := probeResult{start: time.Now()}
	_, r.err = c.CreateTopic(context.Background(), httpclient.TopicSpec{Name: name, Partitions: 3})
	r.end = time.Now()
	switch {
	case r.err == nil:
		r.status = http.StatusCreated
	default:
		r.status = httpclient.StatusOf(r.err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.results = append(p.results, r)
}

// halt stops the probe and waits for the creates in flight (idempotent).
func (p *metaProbe) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.wg.Wait()
}

// since returns the results of creates sent at or after t, in send order.
func (p *metaProbe) since(t time.Time) []probeResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []probeResult
	for _, r := range p.results {
		if !r.start.Before(t) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// recovered returns how long after t the first create sent at or after t
// succeeded, and false if none did yet.
func (p *metaProbe) recovered(t time.Time) (time.Duration, bool) {
	for _, r := range p.since(t) {
		if r.status == http.StatusCreated {
			return r.end.Sub(t), true
		}
	}
	return 0, false
}

// outcomes counts the statuses of the creates sent at or after t.
func (p *metaProbe) outcomes(t time.Time) map[int]int {
	m := map[int]int{}
	for _, r := range p.since(t) {
		m[r.status]++
	}
	return m
}

// waitRecovered waits until a create sent at or after t succeeded.
func (p *metaProbe) waitRecovered(t0 time.Time, within time.Duration) (time.Duration, bool) {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if d, ok := p.recovered(t0); ok {
			return d, true
		}
		time.Sleep(20 * time.Millisecond) // polling the probe, bounded by the deadline
	}
	return 0, false
}

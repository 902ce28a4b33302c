package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// leaderSeries is the exposition line of a node leading the metadata shard.
const leaderSeries = `narad_raft_state{state="leader"} 1`

// leaderIndex polls the nodes at the given indexes until exactly one says
// it leads the metadata shard, and returns its index.
func leaderIndex(t *testing.T, nodes []*node, among ...int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		leaders := []int{}
		for _, i := range among {
			if scrape(nodes[i], leaderSeries) {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("no single metadata leader among nodes %v", among)
	return -1
}

// scrape reports whether n's /metrics holds the exposition line series.
func scrape(n *node, series string) bool {
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == series {
			return true
		}
	}
	return false
}

// others returns the indexes of nodes other than skip.
func others(n int, skip ...int) []int {
	var out []int
	for i := 0; i < n; i++ {
		keep := true
		for _, s := range skip {
			keep = keep && i != s
		}
		if keep {
			out = append(out, i)
		}
	}
	return out
}

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

// waitEveryTopicPlaced waits until every topic n lists has an owner for
// each partition: a create answered 201 (or a 503 whose change applied
// after all) must be placed, whatever failed around it (api.md §2.5).
func waitEveryTopicPlaced(t *testing.T, n *node, within time.Duration) int {
	t.Helper()
	c := client(t, n)
	deadline := time.Now().Add(within)
	unplaced := []string{}
	for {
		topics, err := c.ListTopics(context.Background())
		unplaced = unplaced[:0]
		for _, tp := range topics {
			if !placed(c, tp.Name) {
				unplaced = append(unplaced, tp.Name)
			}
		}
		switch {
		case err == nil && len(unplaced) == 0:
			return len(topics)
		case time.Now().After(deadline):
			t.Fatalf("%d topics not placed within %s (e.g. %v); list error %v", len(unplaced), within, first(unplaced), err)
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
}

// placed reports whether every partition of topic has an owner.
func placed(c *httpclient.Client, topic string) bool {
	tp, err := c.Topic(context.Background(), topic)
	if err != nil || len(tp.PartitionStats) != tp.Partitions {
		return false
	}
	for _, s := range tp.PartitionStats {
		if s.OwnerNode == "" {
			return false
		}
	}
	return true
}

// waitDispatched waits until every node's ingress WAL has handed all its
// records to their owners (narad_ingress_dispatch_backlog_records 0): a
// checkpoint stuck behind a record would leave nothing lost yet redeliver
// the whole backlog at every restart (internals.md §2.8, §3.3).
func waitDispatched(t *testing.T, nodes []*node, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, n := range nodes {
		for !scrape(n, "narad_ingress_dispatch_backlog_records 0") {
			if time.Now().After(deadline) {
				t.Fatalf("node on %d still has an ingress backlog %s after the load ended: %s",
					n.port, within, series(n, "narad_ingress_dispatch_backlog_records"))
			}
			time.Sleep(100 * time.Millisecond) // polling the node, bounded by the deadline
		}
	}
}

// series returns n's exposition lines that start with name.
func series(n *node, name string) string {
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

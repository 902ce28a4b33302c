package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// idleNode stands in front of a fake broker as one node: /metrics answers
// the two process series (CPU moving by cpuStep per scrape, RSS growing by
// rssPerPartition for every partition the broker holds) and records the
// name[] filters it was asked for; everything else goes to the broker.
type idleNode struct {
	srv     *httptest.Server
	mu      sync.Mutex
	cpu     float64
	filters []string
}

func newIdleNode(t *testing.T, b *fakeBroker, cpuStep, rssPerPartition float64) *idleNode {
	n := &idleNode{cpu: 10}
	next := proxyTo(t, b)
	n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			next.ServeHTTP(w, r)
			return
		}
		b.mu.Lock()
		parts := 0
		for _, ft := range b.topics {
			parts += len(ft.parts)
		}
		b.mu.Unlock()
		n.mu.Lock()
		defer n.mu.Unlock()
		n.filters = append(n.filters, strings.Join(r.URL.Query()["name[]"], ","))
		fmt.Fprintf(w, "process_cpu_seconds_total %g\nprocess_resident_memory_bytes %g\n", n.cpu, 50e6+rssPerPartition*float64(parts))
		n.cpu += cpuStep
	}))
	t.Cleanup(n.srv.Close)
	return n
}

// ensure that bench --idle-topics creates the topics (reusing one that
// exists), puts one message in each, and reports the nodes' CPU over the
// window in % of a core and their memory growth per partition, reading
// only the two series it needs.
func TestBenchIdleTopicsReport(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("idle-000002", 3)
	node := newIdleNode(t, b, 0.25, 4096)
	r := runCLI(t, cliOpts{}, "bench", "idle", "--idle-topics", "7", "--partitions", "3", "--producers", "3",
		"--settle", "0s", "--window", "100ms", "--json", "-s", node.srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	var rep idleReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if rep.Topics != 7 || rep.Partitions != 21 || rep.Created != 6 || rep.Existing != 1 || rep.NodesRead != 1 {
		t.Fatalf("report %s", r.stdout)
	}
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("idle-%06d", i)
		if got := len(b.lines("POST /v1/topics/" + name + "/produce")); got != 1 {
			t.Fatalf("%s got %d produces, want 1", name, got)
		}
	}
	// Four readings: before the set-up, a warm-up, the window's start and end.
	if rep.CPUSeconds != 0.25 || math.Abs(rep.CorePercent-100*0.25/rep.WindowSeconds) > 1e-6 {
		t.Fatalf("cpu %g s, %g%% over %g s", rep.CPUSeconds, rep.CorePercent, rep.WindowSeconds)
	}
	// 18 partitions were created (the existing topic's 3 were there before).
	if want := 4096.0 * 18 / 21; math.Abs(rep.BytesPerPartition-want) > 1e-6 {
		t.Fatalf("%g bytes per partition, want %g", rep.BytesPerPartition, want)
	}
	node.mu.Lock()
	defer node.mu.Unlock()
	for _, f := range node.filters {
		if f != cpuMetric+","+residentMetric {
			t.Fatalf("metrics read with filter %q, want just the two process series", f)
		}
	}
}

// ensure that bad idle settings are refused before anything is created.
func TestBenchIdleRefusesBadSettings(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	for _, args := range [][]string{{"--partitions", "0"}, {"--window", "0s"}, {"--settle", "-1s"}} {
		r := runCLI(t, cliOpts{}, append([]string{"bench", "idle", "--idle-topics", "2", "-s", b.url()}, args...)...)
		if r.code == 0 || len(b.lines("POST /v1/topics")) != 0 {
			t.Fatalf("%v: exit %d, requests %v", args, r.code, b.lines("POST"))
		}
	}
}

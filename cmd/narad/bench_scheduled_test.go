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

// scheduledNode stands in front of a fake broker as one node: it answers
// batch produces itself (recording each batch's size, the delay_ms of every
// message and the payload sizes, or refusing with failStatus), /metrics
// answers the two process series (CPU moving by cpuStep per scrape, RSS
// growing by rssPerMessage for every message received) and everything else
// (topic create) goes to the broker.
type scheduledNode struct {
	srv        *httptest.Server
	mu         sync.Mutex
	cpu        float64
	received   int
	batches    []int
	delays     map[int64]int // delay_ms -> messages
	sizes      map[int]int   // payload bytes -> messages
	topics     map[string]int
	failStatus int
}

func newScheduledNode(t *testing.T, b *fakeBroker, cpuStep, rssPerMessage float64) *scheduledNode {
	n := &scheduledNode{cpu: 10, delays: map[int64]int{}, sizes: map[int]int{}, topics: map[string]int{}}
	next := proxyTo(t, b)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/topics/{topic}/produce/batch", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Payload json.RawMessage `json:"payload"`
				DelayMs int64           `json:"delay_ms"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			writeErr(w, 400, err.Error())
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.failStatus != 0 {
			writeErr(w, n.failStatus, "delivery too far")
			return
		}
		n.batches = append(n.batches, len(req.Messages))
		n.topics[r.PathValue("topic")] += len(req.Messages)
		for _, m := range req.Messages {
			n.delays[m.DelayMs]++
			n.sizes[len(m.Payload)]++
		}
		n.received += len(req.Messages)
		writeJSON(w, 202, map[string]int{"accepted": len(req.Messages)})
	})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		fmt.Fprintf(w, "process_cpu_seconds_total %g\nprocess_resident_memory_bytes %g\n", n.cpu, 50e6+rssPerMessage*float64(n.received))
		n.cpu += cpuStep
	})
	mux.Handle("/", next)
	n.srv = httptest.NewServer(mux)
	t.Cleanup(n.srv.Close)
	return n
}

// ensure that bench --scheduled creates the topic, delivers exactly N
// messages of --size bytes in batches of at most 1000, each with delay_ms
// equal to --scheduled-delay, and reports the nodes' CPU over the window and
// their memory growth per scheduled message.
func TestBenchScheduledReport(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	node := newScheduledNode(t, b, 0.25, 12.5)
	r := runCLI(t, cliOpts{}, "bench", "sched", "--scheduled", "2500", "--scheduled-delay", "90m", "--size", "128",
		"--partitions", "4", "--producers", "3", "--settle", "0s", "--window", "50ms", "--json", "-s", node.srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	var rep scheduledReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if rep.Topic != "sched" || !rep.Created || rep.Scheduled != 2500 || rep.DelaySeconds != 5400 || rep.NodesRead != 1 || rep.ProduceRate <= 0 {
		t.Fatalf("report %s", r.stdout)
	}
	b.mu.Lock()
	ft := b.topics["sched"]
	b.mu.Unlock()
	if ft == nil || len(ft.parts) != 4 {
		t.Fatalf("topic sched not created with 4 partitions: %+v", ft)
	}
	node.mu.Lock()
	sum := 0
	for _, n := range node.batches {
		if n < 1 || n > 1000 {
			t.Errorf("a batch of %d messages", n)
		}
		sum += n
	}
	if sum != 2500 || len(node.batches) != 3 || node.topics["sched"] != 2500 {
		t.Errorf("batches %v (topics %v), want 2500 messages in 3", node.batches, node.topics)
	}
	if len(node.delays) != 1 || node.delays[5400000] != 2500 {
		t.Errorf("delay_ms %v, want 5400000 on each", node.delays)
	}
	if len(node.sizes) != 1 || node.sizes[128] != 2500 {
		t.Errorf("payload sizes %v, want 128 B each", node.sizes)
	}
	node.mu.Unlock()
	// Four readings: before the set-up, a warm-up, the window's start and end.
	if rep.CPUSeconds != 0.25 || math.Abs(rep.CorePercent-100*0.25/rep.WindowSeconds) > 1e-6 {
		t.Fatalf("cpu %g s, %g%% over %g s", rep.CPUSeconds, rep.CorePercent, rep.WindowSeconds)
	}
	if rep.RSSBeforeBytes != 50e6 || rep.RSSAfterBytes != 50e6+12.5*2500 || math.Abs(rep.BytesPerMessage-12.5) > 1e-9 {
		t.Fatalf("rss %g -> %g, %g bytes per message", rep.RSSBeforeBytes, rep.RSSAfterBytes, rep.BytesPerMessage)
	}
}

// ensure that without a topic bench --scheduled uses bench-scheduled,
// reusing it when it exists, and prints the report as a table.
func TestBenchScheduledDefaultTopicTable(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic(scheduledTopic, 3)
	node := newScheduledNode(t, b, 0.5, 0)
	r := runCLI(t, cliOpts{}, "bench", "--scheduled", "7", "--settle", "0s", "--window", "10ms", "-s", node.srv.URL)
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{"7 messages of 256 B on bench-scheduled (existing), due in 1h0m0s", "node CPU", "0.500s over",
		"50.0 MB before the set-up, 50.0 MB after: 0.0 B per scheduled message"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("no %q in\n%s", want, r.stdout)
		}
	}
	node.mu.Lock()
	defer node.mu.Unlock()
	if node.topics[scheduledTopic] != 7 || node.delays[3600000] != 7 {
		t.Fatalf("topics %v, delays %v", node.topics, node.delays)
	}
}

// ensure that a refused batch ends the run with exit 1 and the server's error.
func TestBenchScheduledProduceErrorStops(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	node := newScheduledNode(t, b, 0, 0)
	node.mu.Lock()
	node.failStatus = 400
	node.mu.Unlock()
	r := runCLI(t, cliOpts{}, "bench", "--scheduled", "5000", "--settle", "0s", "--window", "10ms", "-s", node.srv.URL)
	if r.code != 1 || !strings.Contains(r.stderr, "delivery too far") || r.stdout != "" {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
}

// ensure that bad scheduled settings are usage errors refused before
// anything is sent.
func TestBenchScheduledRefusesBadSettings(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	for _, args := range [][]string{
		{"--scheduled", "0"},
		{"--scheduled", "-3"},
		{"--scheduled", "5", "--scheduled-delay", "0s"},
		{"--scheduled", "5", "--scheduled-delay", "-1s"},
		{"--scheduled", "5", "--scheduled-delay", "169h"},
		{"--scheduled", "5", "--idle-topics", "2"},
		{"--scheduled", "5", "--window", "0s"},
		{"--scheduled", "5", "--partitions", "0"},
	} {
		r := runCLI(t, cliOpts{}, append([]string{"bench", "-s", b.url()}, args...)...)
		if r.code != 2 || len(b.requests()) != 0 {
			t.Fatalf("%v: exit %d (%s), requests %v", args, r.code, r.stderr, b.lines(""))
		}
	}
	ok := scheduledConfig{count: 1, partitions: 3, size: 1, delay: scheduledMaxDelay, concurrency: 1, window: 1}
	if err := ok.validate(); err != nil {
		t.Fatalf("168h refused: %v", err)
	}
	// Without --scheduled the topic is still required.
	if r := runCLI(t, cliOpts{}, "bench", "-s", b.url()); r.code != 2 {
		t.Fatalf("bench without a topic: exit %d", r.code)
	}
}

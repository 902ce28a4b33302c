package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeMetrics serves /metrics with a process_cpu_seconds_total that moves
// by step at every scrape (status, when set, answers every scrape
// instead), records who scraped, and hands other paths to next.
type fakeMetrics struct {
	srv    *httptest.Server
	mu     sync.Mutex
	value  float64
	step   float64
	status int
	users  []string
	extra  func(scrape int) string // more exposition lines, by scrape number (0 first)
}

func newFakeMetrics(t *testing.T, start, step float64, next http.Handler) *fakeMetrics {
	m := &fakeMetrics{value: start, step: step}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			if next == nil {
				http.NotFound(w, r)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		user, pass, _ := r.BasicAuth()
		m.mu.Lock()
		defer m.mu.Unlock()
		m.users = append(m.users, user+":"+pass)
		if m.status != 0 {
			http.Error(w, http.StatusText(m.status), m.status)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n" +
			"# TYPE process_cpu_seconds_total counter\n" +
			"process_cpu_seconds_total " + strconv.FormatFloat(m.value, 'g', -1, 64) + "\n" +
			"process_max_fds 1.048576e+06\n"))
		if m.extra != nil {
			_, _ = w.Write([]byte(m.extra(len(m.users) - 1)))
		}
		m.value += m.step
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeMetrics) url() string { return m.srv.URL }

func (m *fakeMetrics) scrapers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.users)
}

// proxyTo forwards requests to a fake broker, so a fakeMetrics can stand in
// front of it as one node serving both the API and /metrics.
func proxyTo(t *testing.T, b *fakeBroker) http.Handler {
	u, err := url.Parse(b.url())
	if err != nil {
		t.Fatal(err)
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = log.New(io.Discard, "", 0) // long polls cut short at the end of a run
	return p
}

func near(got *float64, want float64) bool {
	return got != nil && math.Abs(*got-want) < 1e-6*math.Max(1, math.Abs(want))
}

// ensure that node CPU is the difference of two readings of each node's
// counter, read with the run's credentials, and is divided per message.
func TestBenchNodeCPUFromTwoScrapes(t *testing.T) {
	t.Parallel()
	for _, mode := range clientModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.user, b.pass = "alice", "pw"
			b.addTopic("bench", 3)
			node := newFakeMetrics(t, 100, 1.25, proxyTo(t, b))
			r := runCLI(t, cliOpts{}, "bench", "bench", "--client", mode, "--count", "50", "--producers", "2", "--consumers", "1", "--consume-wait", "50ms", "--json", "-s", node.url(), "-u", "alice", "-p", "pw")
			var rep benchReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
				t.Fatalf("exit %d %v: %s %s", r.code, err, r.stdout, r.stderr)
			}
			c := rep.NodeCPU
			if rep.Client != mode || c == nil || !near(c.Seconds, 1.25) || c.NodesRead != 1 || len(c.Nodes) != 1 || c.Nodes[0].Metrics != node.url()+"/metrics" {
				t.Fatalf("client %q, node cpu %+v", rep.Client, c)
			}
			if !near(c.UsPerMsgProduced, 1.25e6/50) || !near(c.UsPerMsgFullFlow, 1.25e6/50) || c.WindowSeconds <= 0 {
				t.Fatalf("per message %v %v, window %v", deref(c.UsPerMsgProduced), deref(c.UsPerMsgFullFlow), c.WindowSeconds)
			}
			if got := node.scrapers(); !slices.Equal(got, []string{"alice:pw", "alice:pw"}) {
				t.Fatalf("scrapes as %q, want two with the run's credentials", got)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// ensure that nodes whose metrics cannot be read, or whose counter went
// back, are named in the report while the run passes and the others count.
func TestBenchNodeCPUPartial(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("bench", 3)
	good := newFakeMetrics(t, 7, 0.5, nil)
	missing := newFakeMetrics(t, 0, 0, nil)
	missing.status = http.StatusNotFound
	restarted := newFakeMetrics(t, 50, -49, nil)
	args := []string{"bench", "bench", "--count", "40", "--producers", "2", "-s", b.url(),
		"--metrics", good.url() + "," + missing.url() + "/metrics, " + restarted.url() + "/, http://127.0.0.1:1"}
	r := runCLI(t, cliOpts{}, args...)
	out := squash(r.stdout)
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	for _, want := range []string{
		"node CPU 0.50s on 1 of 4 node(s) in ",
		": 12500.0µs per message produced",
		"node CPU by node " + good.url() + "/metrics 0.50s",
		"metrics unreadable " + missing.url() + "/metrics: before the run: http 404: Not Found",
		"metrics unreadable " + restarted.url() + "/metrics: process_cpu_seconds_total went back from 50 to 1: the node restarted during the run",
		"metrics unreadable http://127.0.0.1:1/metrics: before the run: Get \"http://127.0.0.1:1/metrics\": dial tcp 127.0.0.1:1: connect: connection refused",
		"result PASS",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("report lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(out, "full flow") {
		t.Fatalf("a produce-only run reported a full-flow figure:\n%s", r.stdout)
	}
	if n := len(b.lines("GET /metrics")); n != 0 {
		t.Fatalf("with --metrics, %d scrapes still went to the API port", n)
	}
}

// ensure that an unreadable /metrics on the API port is reported, with a
// hint, instead of failing the run, in the table and in JSON.
func TestBenchUnreadableMetricsReported(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t) // serves no /metrics: 404, as with http.metrics_addr set
	b.addTopic("bench", 3)
	r := runCLI(t, cliOpts{}, "bench", "bench", "--count", "20", "--producers", "2", "-s", b.url())
	want := "metrics unreadable " + b.url() + "/metrics: before the run: http 404: 404 page not found (metrics on their own listener? name it with --metrics)"
	if out := squash(r.stdout); r.code != 0 || !strings.Contains(out, "node CPU not measured: no node's process_cpu_seconds_total could be read") || !strings.Contains(out, want) || !strings.Contains(out, "result PASS") {
		t.Fatalf("exit %d, report lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if n := len(b.lines("GET /metrics")); n != 2 {
		t.Fatalf("%d scrapes of the API port's /metrics, want one before and one after", n)
	}
	r = runCLI(t, cliOpts{}, "bench", "bench", "--count", "20", "--producers", "2", "--json", "-s", b.url())
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("exit %d %v: %s", r.code, err, r.stdout)
	}
	if c := rep.NodeCPU; c == nil || c.Seconds != nil || c.UsPerMsgProduced != nil || c.NodesRead != 0 || len(c.Nodes) != 1 || !strings.HasPrefix(c.Nodes[0].Error, "before the run: http 404") {
		t.Fatalf("node cpu %+v", rep.NodeCPU)
	}
}

// ensure that --json keeps every field it had and adds client and node_cpu.
func TestBenchJSONFields(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("bench", 3)
	node := newFakeMetrics(t, 1, 0.25, nil)
	r := runCLI(t, cliOpts{}, "bench", "bench", "--count", "30", "--producers", "2", "--consumers", "1", "--consume-wait", "50ms", "--json", "-s", b.url(), "--metrics", node.url())
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
		t.Fatalf("exit %d %v: %s", r.code, err, r.stdout)
	}
	for _, k := range []string{"topic", "servers", "payload", "size", "producers", "produce_batch", "consumers", "consume_batch", "produced",
		"produce_failures", "produce_seconds", "produce_msgs_per_sec", "produce_latency_ms", "consume", "result", "client", "node_cpu"} {
		if _, ok := got[k]; !ok {
			t.Fatalf("JSON lacks %q: %s", k, r.stdout)
		}
	}
	if string(got["client"]) != `"http"` {
		t.Fatalf("client %s, want the default http", got["client"])
	}
	var cpu map[string]json.RawMessage
	if err := json.Unmarshal(got["node_cpu"], &cpu); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seconds", "window_seconds", "us_per_msg_produced", "us_per_msg_full_flow", "nodes_read", "nodes"} {
		if _, ok := cpu[k]; !ok {
			t.Fatalf("node_cpu lacks %q: %s", k, got["node_cpu"])
		}
	}
	var nodes bytes.Buffer
	if err := json.Compact(&nodes, cpu["nodes"]); err != nil || string(cpu["seconds"]) != "0.25" || nodes.String() != `[{"metrics":"`+node.url()+`/metrics","seconds":0.25}]` {
		t.Fatalf("node_cpu %s", got["node_cpu"])
	}
}

// ensure that the counter is found in an exposition, with or without
// labels and a timestamp, and that its absence is an error.
func TestCPUSeconds(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		text string
		want float64
		err  string
	}{
		"plain":           {text: "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.34\n", want: 12.34},
		"exponent":        {text: "go_goroutines 9\nprocess_cpu_seconds_total 1.2345e+03\n", want: 1234.5},
		"labels_and_time": {text: "process_cpu_seconds_total{pid=\"7\"} 3.5 1700000000000\n", want: 3.5},
		"longer_name":     {text: "process_cpu_seconds_total_x 1\n", err: "no process_cpu_seconds_total in the metrics"},
		"missing":         {text: "narad_topics_total 3\n", err: "no process_cpu_seconds_total in the metrics"},
		"bad_value":       {text: "process_cpu_seconds_total abc\n", err: `process_cpu_seconds_total: value "abc"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := cpuSeconds([]byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

// ensure that credentials bound for a --metrics URL off this machine over
// plain http draw the CLI's warning, and local or https ones do not.
func TestWarnPlainMetrics(t *testing.T) {
	t.Parallel()
	targets, err := metricsTargets(nil, []string{"http://10.0.0.7:9100", "https://10.0.0.8:9100", "http://127.0.0.1:9100"})
	if err != nil {
		t.Fatal(err)
	}
	var withUser, without syncBuffer
	warnPlainMetrics(&env{stderr: &withUser}, target{user: "alice"}, targets)
	warnPlainMetrics(&env{stderr: &without}, target{}, targets)
	want := "narad: warning: sending credentials over plain http:// to 10.0.0.7:9100 (--metrics); use https:// beyond this machine\n"
	if withUser.String() != want || without.String() != "" {
		t.Fatalf("warnings %q and %q", withUser.String(), without.String())
	}
}

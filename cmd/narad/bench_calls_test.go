package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// ensure that node-to-node requests are summed by operation over every
// outcome, that a node without the series sent none, and that an
// unreadable line is an error.
func TestCallsByOp(t *testing.T) {
	t.Parallel()
	got, err := callsByOp([]byte("# HELP narad_cluster_rpc_requests_total Node-to-node requests.\n" +
		"# TYPE narad_cluster_rpc_requests_total counter\n" +
		`narad_cluster_rpc_requests_total{op="ack",outcome="ok"} 40` + "\n" +
		`narad_cluster_rpc_requests_total{op="ack",outcome="failed"} 2` + "\n" +
		`narad_cluster_rpc_requests_total{outcome="ok",op="consume"} 7 1765000000000` + "\n" +
		`narad_cluster_rpc_requests_total_created{op="ack"} 1` + "\n" +
		"process_cpu_seconds_total 3\n"))
	if err != nil || !maps.Equal(got, map[string]float64{"ack": 42, "consume": 7}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if got, err := callsByOp([]byte("process_cpu_seconds_total 3\n")); err != nil || len(got) != 0 {
		t.Fatalf("without the series: %v, %v; want none and no error", got, err)
	}
	for _, bad := range []string{`narad_cluster_rpc_requests_total{op="ack" 4`, `narad_cluster_rpc_requests_total{outcome="ok"} 4`,
		`narad_cluster_rpc_requests_total{op="ack"} many`} {
		if _, err := callsByOp([]byte(bad + "\n")); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// ensure that the bench reports the node-to-node requests its nodes sent
// during the run, by operation, per message through the full flow, in the
// JSON and in the table, and nothing for nodes that sent none.
func TestBenchNodeCalls(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("bench", 3)
	node := newFakeMetrics(t, 1, 0.25, proxyTo(t, b))
	node.mu.Lock()
	node.extra = func(scrape int) string {
		return fmt.Sprintf("narad_cluster_rpc_requests_total{op=\"ack\",outcome=\"ok\"} %d\n"+
			"narad_cluster_rpc_requests_total{op=\"ack\",outcome=\"failed\"} %d\n"+
			"narad_cluster_rpc_requests_total{op=\"consume\",outcome=\"ok\"} 9\n", 100+35*scrape, 3+5*scrape)
	}
	node.mu.Unlock()
	quiet := newFakeMetrics(t, 1, 0.25, nil)
	args := []string{"bench", "bench", "--count", "50", "--producers", "2", "--consumers", "1", "--consume-wait", "50ms",
		"-s", node.url(), "--metrics", node.url() + "," + quiet.url()}
	r := runCLI(t, cliOpts{}, append(args, "--json")...)
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.NodeCPU == nil {
		t.Fatalf("exit %d %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	c := rep.NodeCPU
	if !maps.Equal(c.CallsPerMsg, map[string]float64{"ack": 0.8}) || !near(c.CallsPerMsgTotal, 0.8) {
		t.Fatalf("calls per message %v, total %v; want ack 0.8 (40 of 50 messages)", c.CallsPerMsg, deref(c.CallsPerMsgTotal))
	}
	r = runCLI(t, cliOpts{}, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "node-to-node calls") || !strings.Contains(r.stdout, "0.80 per message: ack 0.80") {
		t.Fatalf("exit %d, table:\n%s", r.code, r.stdout)
	}
	r = runCLI(t, cliOpts{}, "bench", "bench", "--count", "20", "--producers", "1", "--consumers", "1", "--consume-wait", "50ms",
		"--json", "-s", b.url(), "--metrics", quiet.url())
	if r.code != 0 || strings.Contains(r.stdout, "node_calls_per_msg") {
		t.Fatalf("exit %d; nodes that sent nothing: %s", r.code, r.stdout)
	}
}

// ensure that no exposition makes callsByOp panic, and that every
// operation it counts was named by an op label on a series of callsMetric.
func FuzzCallsByOp(f *testing.F) {
	f.Add([]byte(`narad_cluster_rpc_requests_total{op="ack",outcome="ok"} 40` + "\nprocess_cpu_seconds_total 3\n"))
	f.Add([]byte(`narad_cluster_rpc_requests_total{op="a,b",outcome=ok} 1e3 17` + "\n"))
	f.Add([]byte("narad_cluster_rpc_requests_total{} \n"))
	f.Fuzz(func(t *testing.T, exposition []byte) {
		got, err := callsByOp(exposition)
		if err != nil {
			return
		}
		for op := range got {
			if !strings.Contains(string(exposition), op) {
				t.Fatalf("op %q counted but not in the exposition", op)
			}
		}
	})
}

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The three-node speed target of the cluster issue is a ratio against one
// node on the same machine, and this machine's speed drifts from minute to
// minute, so the figures only mean something as pairs run back to back.
// TestBenchPairs runs them: each round starts one node, runs `narad bench`
// against it, stops it, then does the same with three nodes on loopback
// (requests spread over all three), and the log reports each pair and the
// medians. It asserts nothing about speed (only that every run accounted
// for every accepted message); it is a measuring tool, off unless
// NARAD_E2E_BENCH=1 (go tool -modfile=tools.mod task bench-cluster).
const (
	benchPairsEnv     = "NARAD_E2E_BENCH"
	benchRoundsEnv    = "NARAD_E2E_BENCH_ROUNDS"     // rounds (default 3)
	benchCountEnv     = "NARAD_E2E_BENCH_COUNT"      // messages per run (default 60000)
	benchProducersEnv = "NARAD_E2E_BENCH_PRODUCERS"  // single-message producers (default 128)
	benchProcsEnv     = "NARAD_E2E_BENCH_GOMAXPROCS" // GOMAXPROCS of each of the three nodes (default 1; "" keeps Go's)
	benchTopic        = "bench"
	benchPartitions   = 6
	benchConsumers    = "6"
	benchConsumeBatch = "100"
)

// benchRun is what one bench run reported.
type benchRun struct {
	rate    float64 // full-flow messages per second
	p99     float64 // produce p99, ms
	nodeCPU time.Duration
	client  time.Duration
}

func TestBenchPairs(t *testing.T) {
	if os.Getenv(benchPairsEnv) != "1" {
		t.Skipf("a measuring tool: set %s=1 to run it (go tool -modfile=tools.mod task bench-cluster)", benchPairsEnv)
	}
	// The nodes run with the quiet runtime monitor (cmd/narad/sysmon.go), as
	// the recorded figures were measured.
	t.Setenv("NARAD_QUIET_SYSMON", "1")
	rounds, count, producers := envInt(t, benchRoundsEnv, 3), envInt(t, benchCountEnv, 60000), envInt(t, benchProducersEnv, 128)
	procs, ok := os.LookupEnv(benchProcsEnv)
	if !ok {
		procs = "1"
	}
	var extra []string
	if procs != "" {
		extra = []string{"GOMAXPROCS=" + procs}
	}
	t.Logf("%d rounds of %d messages, %d producers, %s batch consumers (batch %s), %d partitions; three nodes with GOMAXPROCS=%q",
		rounds, count, producers, benchConsumers, benchConsumeBatch, benchPartitions, procs)
	var ones, threes []float64
	for r := 1; r <= rounds; r++ {
		var one, three benchRun
		t.Run(fmt.Sprintf("round%d/one", r), func(t *testing.T) {
			n := startNode(t, t.TempDir(), freePorts(t))
			one = benchAgainst(t, []*node{n}, count, producers)
		})
		t.Run(fmt.Sprintf("round%d/three", r), func(t *testing.T) {
			three = benchAgainst(t, startClusterWith(t, 3, extra), count, producers)
		})
		t.Logf("round %d: one node %.0f msg/s (produce p99 %.1f ms, node CPU %.1f s, client %.1f s) | three nodes %.0f msg/s (p99 %.1f ms, node CPU %.1f s, client %.1f s) | %.0f%%",
			r, one.rate, one.p99, one.nodeCPU.Seconds(), one.client.Seconds(),
			three.rate, three.p99, three.nodeCPU.Seconds(), three.client.Seconds(), 100*three.rate/max(one.rate, 1))
		ones, threes = append(ones, one.rate), append(threes, three.rate)
	}
	m1, m3 := median(ones), median(threes)
	t.Logf("medians: one node %.0f msg/s, three nodes %.0f msg/s: %.0f%%", m1, m3, 100*m3/max(m1, 1))
}

// benchAgainst creates the bench topic and runs narad bench over every node
// of nodes, counting the nodes' CPU time over the run; user and password,
// when given, are the credentials of a secured node.
func benchAgainst(t *testing.T, nodes []*node, count, producers int, userPassword ...string) benchRun {
	t.Helper()
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = n.url
	}
	opts := httpclient.Options{Servers: urls[:1], ClientName: "narad-e2e", Timeout: 30 * time.Second}
	args := []string{"-s", urls[0]}
	if len(userPassword) == 2 {
		opts.User, opts.Password = userPassword[0], userPassword[1]
		args = append(args, "-u", userPassword[0], "-p", userPassword[1])
	}
	c, err := httpclient.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(context.Background(), httpclient.TopicSpec{Name: benchTopic, Partitions: benchPartitions}); err != nil {
		t.Fatalf("create %s: %v", benchTopic, err)
	}
	waitPlaced(t, c, benchTopic)
	before := cpuOf(t, nodes)
	cmd := exec.Command(naradBin, append(args, "bench", benchTopic, "--json", "--client", "pinned",
		"--count", strconv.Itoa(count), "--producers", strconv.Itoa(producers),
		"--consumers", benchConsumers, "--consume-batch", benchConsumeBatch, "--servers", strings.Join(urls, ","))...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	runErr := cmd.Run()
	nodeCPU := cpuOf(t, nodes) - before
	var rep struct {
		ProduceLatency struct {
			P99 float64 `json:"p99"`
		} `json:"produce_latency_ms"`
		Consume *struct {
			Lost         int     `json:"lost"`
			FullFlowRate float64 `json:"full_flow_msgs_per_sec"`
		} `json:"consume"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Consume == nil {
		t.Fatalf("bench: %v (%v)\nstdout: %s\nstderr: %s", err, runErr, out.String(), errOut.String())
	}
	if runErr != nil || rep.Result != "PASS" || rep.Consume.Lost != 0 {
		t.Fatalf("bench %s, %d lost (%v): %s", rep.Result, rep.Consume.Lost, runErr, errOut.String())
	}
	return benchRun{rate: rep.Consume.FullFlowRate, p99: rep.ProduceLatency.P99, nodeCPU: nodeCPU,
		client: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
}

// cpuOf sums the user and system CPU time the nodes' processes used so far
// (Linux /proc; zero elsewhere).
func cpuOf(t *testing.T, nodes []*node) time.Duration {
	t.Helper()
	var total time.Duration
	for _, n := range nodes {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
		if err != nil {
			return 0
		}
		// Fields after the parenthesised command name: state is field 3,
		// utime and stime fields 14 and 15, in clock ticks of 1/100 s.
		fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		for _, f := range fields[11:13] {
			ticks, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				t.Fatalf("parse /proc stat of node %d: %v", n.port, err)
			}
			total += time.Duration(ticks) * 10 * time.Millisecond
		}
	}
	return total
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

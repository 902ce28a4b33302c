package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that narad bench against a real three-node cluster reads every
// node's CPU and reports the node-to-node requests of the run per message
// (api-extensions.md "narad bench: node CPU and node-to-node calls per
// message"): with requests spread over the three nodes, acks reach nodes
// that do not own their message and are forwarded, so ack calls appear.
func TestBenchReportsNodeCallsOnACluster(t *testing.T) {
	nodes := startCluster(t, 3)
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = n.url
	}
	c, err := httpclient.New(httpclient.Options{Servers: urls[:1], ClientName: "narad-e2e", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(context.Background(), httpclient.TopicSpec{Name: "calls", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "calls")
	out, err := exec.Command(naradBin, "-s", urls[0], "bench", "calls", "--json", "--count", "300", "--producers", "4",
		"--consumers", "4", "--consume-batch", "1", "--servers", strings.Join(urls, ",")).Output()
	var rep struct {
		Result  string `json:"result"`
		NodeCPU struct {
			NodesRead   int                `json:"nodes_read"`
			CallsPerMsg map[string]float64 `json:"node_calls_per_msg"`
			CallsTotal  *float64           `json:"node_calls_per_msg_total"`
		} `json:"node_cpu"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err != nil || rep.Result != "PASS" {
		t.Fatalf("bench: %v, %v: %s", err, jerr, out)
	}
	got := rep.NodeCPU
	if got.NodesRead != 3 || got.CallsTotal == nil || *got.CallsTotal <= 0 || got.CallsPerMsg["ack"] <= 0 {
		t.Fatalf("node_cpu %+v; want three nodes read and forwarded acks among the calls", got)
	}
	sum := 0.0
	for _, v := range got.CallsPerMsg {
		sum += v
	}
	if d := sum - *got.CallsTotal; d > 0.001 || d < -0.001 {
		t.Fatalf("calls by operation %v add up to %.4f, total %.4f", got.CallsPerMsg, sum, *got.CallsTotal)
	}
}

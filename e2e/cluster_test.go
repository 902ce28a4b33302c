package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// clusterSecret is the test clusters' shared node-to-node secret.
const clusterSecret = "e2e-cluster-secret-0123456789abcdef"

// startCluster runs n `narad serve` processes on loopback that bootstrap one
// Raft cluster together, and waits until every one is ready.
func startCluster(t *testing.T, n int) []*node {
	t.Helper()
	return startClusterWith(t, n, nil)
}

// startClusterWith is startCluster with extra environment for every node.
func startClusterWith(t *testing.T, n int, extra []string) []*node {
	t.Helper()
	ports := make([]int, n)
	peers := make([]string, n)
	for i := range ports {
		ports[i] = freePorts(t) // HTTP (and node RPC over UDP) on p, Raft on p+1
		peers[i] = fmt.Sprintf("n%d@127.0.0.1:%d", i+1, ports[i]+1)
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = spawn(t, t.TempDir(), ports[i], append([]string{
			"NARAD_NODE_ID=" + fmt.Sprintf("n%d", i+1),
			fmt.Sprintf("NARAD_HTTP_ADDR=127.0.0.1:%d", ports[i]),
			fmt.Sprintf("NARAD_CLUSTER_ADDR=127.0.0.1:%d", ports[i]+1),
			"NARAD_CLUSTER_PEERS=" + strings.Join(peers, ","),
			"NARAD_CLUSTER_SECRET=" + clusterSecret,
			"NARAD_SECURITY_ENABLED=false",
			"NARAD_SECURITY_ALLOW_INSECURE_CLUSTER=true",
			"NARAD_LOG_LEVEL=warn",
		}, extra...))
	}
	for _, nd := range nodes {
		nd.waitReady()
	}
	return nodes
}

// spawn starts `narad serve` with env on dataDir without waiting.
func spawn(t *testing.T, dataDir string, port int, env []string) *node {
	t.Helper()
	n := &node{t: t, dataDir: dataDir, port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &lockedBuffer{},
		args: []string{"serve"}, env: append([]string{"NARAD_DATA_DIR=" + dataDir}, env...)}
	n.start()
	t.Cleanup(func() {
		n.kill9()
		n.checkRaces()
		if t.Failed() {
			t.Logf("node on %d logs:\n%s", port, tail(n.logs.String(), 3000))
		}
	})
	return n
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// waitPlaced polls a node until every partition of topic has an owner.
func waitPlaced(t *testing.T, c *httpclient.Client, topic string) {
	t.Helper()
	waitPlacedWithin(t, c, topic, 30*time.Second)
}

// waitPlacedWithin is waitPlaced failing after limit.
func waitPlacedWithin(t *testing.T, c *httpclient.Client, topic string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		tp, err := c.Topic(context.Background(), topic)
		if err == nil && len(tp.PartitionStats) == tp.Partitions {
			placed := 0
			for _, s := range tp.PartitionStats {
				if s.OwnerNode != "" {
					placed++
				}
			}
			if placed == tp.Partitions {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("partitions of %s not all placed within %v", topic, limit)
}

// ensure that on a 3-node cluster a topic created on node 1 and produced to on node 2 (the dispatcher committing to each partition's owner over the node RPC) is consumed completely from the owners, byte-identical, nothing lost.
func TestThreeNodesProduceAnywhereConsumeFromOwners(t *testing.T) {
	nodes := startCluster(t, 3)
	clients := make([]*httpclient.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = client(t, n)
	}
	ctx := context.Background()
	if _, err := clients[0].CreateTopic(ctx, httpclient.TopicSpec{Name: "spread", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[1], "spread")
	// A topic created on a follower is placed by the leader as the create
	// applies, not on the controller's next 10 s pass.
	leader := leaderIndex(t, nodes, 0, 1, 2)
	for _, i := range others(len(nodes), leader) {
		name := fmt.Sprintf("via-follower-%d", i)
		if _, err := clients[i].CreateTopic(ctx, httpclient.TopicSpec{Name: name, Partitions: 3}); err != nil {
			t.Fatal(err)
		}
		waitPlacedWithin(t, clients[i], name, 3*time.Second)
	}
	l := newLedger()
	produceBatches(ctx, t, clients[1:2], "spread", "c", 5, 3000, 100, l)
	for _, c := range clients { // each node serves the partitions it owns
		drain(ctx, t, c, "spread", l, 100)
	}
	lost, dups := l.report()
	t.Logf("3 nodes: %d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched (e.g. %v)", len(lost), first(lost), len(l.mismatch), first(l.mismatch))
	}
}

// ensure that on a 3-node cluster any node serves the whole topic: create via node 1, produce via node 2, consume via node 3 (it probes the other owners) and ack via node 1 (acks forwarded to each handle's owner), nothing lost.
func TestThreeNodesAnyNodeServesEverything(t *testing.T) {
	nodes := startCluster(t, 3)
	c1, c2, c3 := client(t, nodes[0]), client(t, nodes[1]), client(t, nodes[2])
	ctx := context.Background()
	if _, err := c1.CreateTopic(ctx, httpclient.TopicSpec{Name: "anywhere", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c3, "anywhere")
	l := newLedger()
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 600; i++ {
		id, payload := fmt.Sprintf("a-%04d", i), payloadFor(r, i)
		if err := c2.Produce(ctx, "anywhere", payload, id, nil); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
		l.accept(id, payload)
	}
	deadline := time.Now().Add(60 * time.Second)
	for lost, _ := l.report(); len(lost) > 0 && time.Now().Before(deadline); lost, _ = l.report() {
		res, err := c3.Consume(ctx, "anywhere", httpclient.ConsumeOptions{Max: 100, Wait: waitPerPoll})
		if err != nil {
			t.Fatalf("consume via node 3: %v", err)
		}
		if len(res.Messages) == 0 {
			continue
		}
		handles := make([]string, 0, len(res.Messages))
		for _, m := range res.Messages {
			l.deliver(m)
			handles = append(handles, m.ReceiptHandle)
		}
		results, err := c1.AckBatch(ctx, "anywhere", handles, httpclient.OpAck)
		if err != nil {
			t.Fatalf("ack via node 1: %v", err)
		}
		for i, res := range results {
			if res.Status != 204 {
				t.Fatalf("ack of %s via node 1: %d %s", handles[i], res.Status, res.Error)
			}
		}
	}
	lost, dups := l.report()
	t.Logf("any node: %d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
}

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// probeFoundLine is what a node logs (at warn) when its empty-volume probe
// found a configured cluster and it starts join-only (bootstrap/probe.go);
// probeRivalLines are what a node that seeds a configuration of its own,
// or whose replica then stops on the real cluster's log, would log.
const probeFoundLine = "peers answered for a configured cluster: starting join-only"

var probeRivalLines = []string{"no peer answered for a configured cluster", "panic"}

// probeCatchUpWithin bounds how long the rejoined node may take to list
// the cluster's topics after it turned ready.
const probeCatchUpWithin = 30 * time.Second

// probeLeaderTenure is how long the leader must have led before it hands
// its leadership over to a voter that rejoins with an empty volume (the
// 12 s tenure rule of application/membership/handover.go), with slack: a
// leader that led less answers without handing over, and its next
// heartbeat stops the empty replica (it may restart once).
const probeLeaderTenure = 13 * time.Second

// probeHandOverLine is what the leader logs (at warn) when the wiped
// voter's join reached it and it hands its leadership over.
const probeHandOverLine = "a voter rejoined with an empty data directory: handing leadership over"

// ensure that on loopback with a port pair per node (HTTP and node RPC on
// p, Raft on p+1, a different p per node: no shared client port) an initial
// member whose volume was wiped probes each peer at that peer's own node-RPC
// address, not at its own port (where it would find only itself), and
// rejoins the existing cluster instead of founding a second one: killed,
// its data directory emptied and restarted, it logs that the peers answered,
// turns ready, lists the topic created before the wipe and the one created
// while it was down, and lists the same three members, all alive voters
// under one leader (internals.md §9.1-§9.2, issue 15).
func TestProbeWipedMemberOnDistinctPortsRejoins(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := context.Background()
	leader := leaderIndex(t, nodes, 0, 1, 2)
	leaderSeen := time.Now() // it was elected at this time or earlier
	victim := others(len(nodes), leader)[0]
	survivor := client(t, nodes[leader])
	if _, err := survivor.CreateTopic(ctx, httpclient.TopicSpec{Name: "before-wipe", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, client(t, nodes[victim]), "before-wipe")
	scaleWaitMembers(t, survivor, []string{"n1", "n2", "n3"}, 3)

	n := nodes[victim]
	n.kill9()
	if err := os.RemoveAll(n.dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(n.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := survivor.CreateTopic(ctx, httpclient.TopicSpec{Name: "while-wiped", Partitions: 3}); err != nil {
		t.Fatalf("create while n%d is down: %v", victim+1, err)
	}
	// The join the probe sends must find a leader that hands over, so the
	// restart waits out the cluster's tenure rule (a timer of the cluster,
	// not a synchronization) with the same leader in place.
	time.Sleep(time.Until(leaderSeen.Add(probeLeaderTenure)))
	if now := leaderIndex(t, nodes, others(len(nodes), victim)...); now != leader {
		t.Fatalf("the leader changed from n%d to n%d while n%d was down", leader+1, now+1, victim+1)
	}
	mark, leaderMark := len(n.logs.String()), len(nodes[leader].logs.String())
	n.restart()

	rejoined := client(t, n)
	waitTopicsListed(t, rejoined, probeCatchUpWithin, "before-wipe", "while-wiped")
	members := scaleWaitMembers(t, rejoined, []string{"n1", "n2", "n3"}, 3)
	t.Logf("n%d (HTTP %d) rejoined; members via it: %+v", victim+1, n.port, members)
	since := n.logs.String()[mark:]
	if !strings.Contains(since, probeFoundLine) {
		t.Errorf("n%d did not log that its probe found the cluster (%q):\n%s", victim+1, probeFoundLine, tail(since, 3000))
	}
	if since := nodes[leader].logs.String()[leaderMark:]; !strings.Contains(since, probeHandOverLine) {
		t.Errorf("leader n%d did not hand its leadership over to the wiped n%d (%q):\n%s",
			leader+1, victim+1, probeHandOverLine, tail(since, 3000))
	}
	for _, line := range probeRivalLines {
		if strings.Contains(since, line) {
			t.Errorf("n%d logged %q after the wipe:\n%s", victim+1, line, tail(since, 3000))
		}
	}
}

// waitTopicsListed polls c until it lists every one of names.
func waitTopicsListed(t *testing.T, c *httpclient.Client, within time.Duration, names ...string) {
	t.Helper()
	deadline := time.Now().Add(within)
	var missing []string
	var lastErr error
	for {
		missing = missing[:0]
		topics, err := c.ListTopics(context.Background())
		lastErr = err
		listed := map[string]bool{}
		for _, tp := range topics {
			listed[tp.Name] = true
		}
		for _, name := range names {
			if !listed[name] {
				missing = append(missing, name)
			}
		}
		if err == nil && len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listed within %s (last error %v)", strings.Join(missing, ", "), within, lastErr)
		}
		time.Sleep(100 * time.Millisecond) // polling the node, bounded by the deadline
	}
}

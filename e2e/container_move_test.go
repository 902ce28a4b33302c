package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// moveCutDuration is how long the destination of the moves stays off the
// network: past the dead verdict (30 s of silence), short of the
// dead-target abort (2 min), so the moves planned to it stall and resume
// when it comes back.
const moveCutDuration = 45 * time.Second

// TestContainersMoveThroughANetworkCut runs the join and the
// decommission on containers (internals.md §11): a fourth container joins
// a three-node cluster holding a topic and is cut off the network (docker
// network disconnect) for moveCutDuration, during which the leader plans
// moves to it that cannot progress; once it is back, the moves finish and
// the cluster settles balanced; then it is decommissioned, its partitions
// move off and it leaves. Messages flow throughout, and every accepted
// message is consumed.
func TestContainersMoveThroughANetworkCut(t *testing.T) {
	c := newDockerCluster(t, 4, 3)
	for _, nd := range c.nodes[:3] {
		c.run(nd)
	}
	for _, nd := range c.nodes[:3] {
		c.waitReady(nd)
	}
	nodes := c.asNodes()
	clients := make([]*httpclient.Client, 4)
	for i, n := range nodes {
		clients[i] = client(t, n)
	}
	ctx := context.Background()
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3"}, 3)
	if _, err := clients[0].CreateTopic(ctx, httpclient.TopicSpec{Name: "big", Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[0], "big")
	l := newLedger()
	produceBatches(ctx, t, clients[:3], "big", "b", 71, 40_000, 500, l)

	n4 := c.nodes[3]
	c.run(n4)
	// Cut n4 as soon as the member table lists it, before the leader's
	// next pass (every 10 s): the moves that pass plans to n4 run with
	// their destination unreachable.
	waitListed(t, clients[0], "n4")
	c.cut(n4)
	cutAt := time.Now()
	traffic := scaleStartTraffic(t, "big", l, clients[:3], clients[:3])
	waitMoveTo(t, clients[0], "n4", moveCutDuration)
	t.Logf("moves to n4 planned while it is cut off the network")
	time.Sleep(time.Until(cutAt.Add(moveCutDuration))) // the outage itself, not a synchronization
	c.heal(n4)
	c.waitReady(n4)
	scaleWaitBalanced(t, clients[3], 2, 2)
	waitMemberStatus(t, nodes[0], "n4", "alive", deadMarkWithin)
	t.Log("n4 is back, alive, and the cluster is balanced; decommissioning it")

	if err := clients[1].Decommission(ctx, "n4"); err != nil {
		t.Fatalf("decommission: %v", err)
	}
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3"}, 3)
	traffic.halt()
	scaleDrain(t, "big", l, clients[:3])
	lost, dups := l.report()
	t.Logf("%d accepted, %d lost, %d duplicates; %d produces refused during the run",
		len(l.accepted), len(lost), dups, traffic.failed.Load())
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
}

// waitMoveTo polls until a move targets node.
func waitMoveTo(t *testing.T, c *httpclient.Client, node string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		mvs, _ := c.Moves(context.Background(), false)
		for _, mv := range mvs {
			if mv.To == node {
				return
			}
		}
		time.Sleep(50 * time.Millisecond) // polling the leader's plan, bounded by the deadline
	}
	t.Fatalf("no move targeted %s within %v", node, limit)
}

// waitListed polls the member table until it lists node, in any state.
func waitListed(t *testing.T, c *httpclient.Client, node string) {
	t.Helper()
	deadline := time.Now().Add(nodeReadyTimeout)
	for time.Now().Before(deadline) {
		ms, _ := c.Members(context.Background())
		for _, m := range ms {
			if m.ID == node {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling the member table, bounded by the deadline
	}
	t.Fatalf("%s never joined", node)
}

package e2e

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that a voter whose volume is wiped comes back under the same id
// (internals.md §9.2-§9.3): node 4 joins a 3-node cluster and is promoted
// to voter; it is killed, its data directory emptied, and a topic is
// created while it is down. Restarted, it sends its join before its Raft
// replica starts, the leader answers "voter" and hands its leadership over
// (so no heartbeat carries a commit index the empty log cannot reach),
// and node 4 catches up: ready, listing the topic created while it was
// down, one cluster of four alive voters with one leader, and nothing in
// its log about a stopped replica.
func TestWipedVoterRejoinsUnderItsID(t *testing.T) {
	port := scalePorts(t, 4)
	nodes := make([]*node, 4)
	for i := 1; i <= 3; i++ {
		nodes[i-1] = scaleSpawn(t, i, port, []int{1, 2, 3})
	}
	for _, n := range nodes[:3] {
		n.waitReady()
	}
	c1 := client(t, nodes[0])
	scaleWaitMembers(t, c1, []string{"n1", "n2", "n3"}, 3)
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	scaleWaitMembers(t, c1, []string{"n1", "n2", "n3", "n4"}, 4)

	n4 := nodes[3]
	n4.kill9()
	if err := os.RemoveAll(n4.dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(n4.dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c1.CreateTopic(ctx, httpclient.TopicSpec{Name: "while-wiped", Partitions: 3}); err != nil {
		t.Fatalf("create while node 4 is down: %v", err)
	}
	n4.restart()
	c4 := client(t, n4)
	if _, err := c4.Topic(ctx, "while-wiped"); err != nil {
		t.Fatalf("the wiped node does not see the topic created while it was down: %v", err)
	}
	members := scaleWaitMembers(t, c4, []string{"n1", "n2", "n3", "n4"}, 4)
	t.Logf("members after the rejoin: %+v", members)
	if logs := n4.logs.String(); strings.Contains(logs, "panic") {
		t.Fatalf("the wiped node's replica stopped:\n%s", tail(logs, 3000))
	}
}

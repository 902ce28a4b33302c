package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The container failure scenarios (internals.md §1.7 "Node down",
// "Network partition"): a 3-node cluster of containers on a private
// network under one paced load, through four failures in turn: docker kill
// of a partition owner, docker kill of the Raft leader, and a network cut
// (docker network disconnect) of an owner and then of the leader, each
// cut lasting networkCutDuration. The ledger must show nothing accepted
// lost at the end.
const (
	// networkCutDuration is how long a cut node stays off the network.
	networkCutDuration = 20 * time.Second
	// containerPace paces each producer's batches so the load lasts
	// through all four failures (about 800 messages a second).
	containerPace = 500 * time.Millisecond
	// containerCap bounds the messages of the whole run.
	containerCap = 120_000
)

// ensure that docker kill and network cuts of an owner and of the leader lose nothing that got a 202, while the live nodes keep accepting produces (internals.md §1.1, §1.4, §1.7).
func TestContainersKillAndNetworkCutLoseNothing(t *testing.T) {
	c := startDockerCluster(t, 3)
	nodes := c.asNodes()
	const topic = "containers"
	_, err := client(t, nodes[0]).CreateTopic(context.Background(), httpclient.TopicSpec{
		Name: topic, Partitions: failoverPartitions, VisibilityTimeoutMs: failoverVisibilityMs})
	if err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, client(t, nodes[2]), topic)
	w := newWorkload(t, nodes, topic, containerCap, produceBatch)
	w.pace = containerPace
	w.start(produceVia, consumeVia)
	w.waitAccepted(killAfterAccepted, 60*time.Second)

	all := []int{0, 1, 2}
	owner := func() int { return others(len(nodes), leaderIndex(t, nodes, all...))[0] }
	leader := func() int { return leaderIndex(t, nodes, all...) }
	for _, step := range []struct {
		name   string
		victim func() int
		fail   func(*dockerNode)
		heal   func(*dockerNode)
		down   time.Duration
	}{
		{"docker kill of an owner", owner, c.kill, c.restart, ownerDownMin},
		{"docker kill of the leader", leader, c.kill, c.restart, ownerDownMin},
		{"network cut of an owner", owner, c.cut, c.heal, networkCutDuration},
		{"network cut of the leader", leader, c.cut, c.heal, networkCutDuration},
	} {
		v := step.victim()
		before := w.accepted.Load()
		began := time.Now()
		step.fail(c.nodes[v])
		w.waitAccepted(int(before)+outageAccepted, 60*time.Second)
		holdDown(began, step.down)
		during := w.accepted.Load() - before
		step.heal(c.nodes[v])
		c.waitReady(c.nodes[v])
		leaderIndex(t, nodes, all...) // one leader again before the next failure
		t.Logf("%s (n%d): %d accepted by the live nodes while it was down for %s; back after %s",
			step.name, v+1, during, step.down, time.Since(began).Round(time.Millisecond))
	}
	w.finishAfter(loadAfterRestart)
	dups := w.verify("containers")
	t.Logf("containers: %s", fmt.Sprintf("%d accepted, %d duplicates", w.accepted.Load(), dups))
}

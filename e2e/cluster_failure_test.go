package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The cluster failure scenarios of internals.md §1.7 on three `narad serve`
// processes on loopback, each with a ledger of every id that got a 202 and
// every delivery: nothing accepted may be lost, duplicates are counted.
const (
	// failoverPartitions spreads each topic two partitions per node.
	failoverPartitions = 6
	// failoverVisibilityMs keeps leases stranded by a dead node short.
	failoverVisibilityMs = 10_000
	// produceBatch is the size of every producer's batch.
	produceBatch = 100
	// ownerDownMin keeps a killed owner down past the dispatcher's 3 s
	// reroute grace (internals.md §3.3).
	ownerDownMin = 5 * time.Second
	// The failure scenarios run paced producers (four batches every
	// failurePace: about 1,600 messages a second) from before the kill
	// until loadAfterRestart after the restart, at most failureCap
	// messages; the kill comes once killAfterAccepted got a 202, and the
	// outage lasts at least until outageAccepted more did and the consumers
	// received outageDelivered from the live owners (internals.md §1.4:
	// consume works for every partition whose owner is alive).
	failurePace       = 250 * time.Millisecond
	failureCap        = 60_000
	killAfterAccepted = 2_000
	outageAccepted    = 1_000
	outageDelivered   = 300
	loadAfterRestart  = 2 * time.Second
	// scenarioBudget bounds the end of a scenario: every id accepted and
	// delivered.
	scenarioBudget = 90 * time.Second
)

// Producers are homed on node 2 mostly (and 1 and 3); consumers on node 3
// mostly (and 1 and 2), each acking through the next node (node 3's
// consumers through node 1).
var (
	produceVia = []int{1, 1, 0, 2}
	consumeVia = []int{2, 2, 0, 1}
)

// scaled shrinks a scenario's message count under -short.
func scaled(n int) int {
	if testing.Short() {
		return n / 4
	}
	return n
}

// failoverCluster starts three nodes and creates topic through node 1, its
// partitions placed on every node.
func failoverCluster(t *testing.T, topic string) []*node {
	t.Helper()
	nodes := startCluster(t, 3)
	_, err := client(t, nodes[0]).CreateTopic(context.Background(), httpclient.TopicSpec{
		Name: topic, Partitions: failoverPartitions, VisibilityTimeoutMs: failoverVisibilityMs})
	if err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, client(t, nodes[2]), topic)
	return nodes
}

// pacedWorkload starts the paced clients of a failure scenario on topic
// and returns once killAfterAccepted messages got a 202.
func pacedWorkload(t *testing.T, nodes []*node, topic string) *workload {
	t.Helper()
	w := newWorkload(t, nodes, topic, failureCap, produceBatch)
	w.pace = failurePace
	w.start(produceVia, consumeVia)
	w.waitAccepted(killAfterAccepted, 30*time.Second)
	return w
}

// finishAfter lets the load run for d more, stops the producers and waits
// until every accepted message was delivered.
func (w *workload) finishAfter(d time.Duration) {
	w.t.Helper()
	time.Sleep(d) // load after the recovery, not a synchronization
	w.stopProducing()
	w.finish(scenarioBudget)
	waitDispatched(w.t, w.nodes, 15*time.Second)
}

// holdDown sleeps until d has passed since t0: a node stays dead for at
// least that long while the clients go on.
func holdDown(t0 time.Time, d time.Duration) {
	time.Sleep(time.Until(t0.Add(d))) // the outage itself, not a synchronization
}

// killAll sends SIGKILL to every node first, then waits for each to exit,
// so they die at the same moment.
func killAll(nodes ...*node) {
	for _, n := range nodes {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, n := range nodes {
		<-n.done
	}
}

// ensure that on a steady 3-node cluster 20,000 messages produced mostly via node 2, consumed mostly via node 3 and acked via node 1 are all delivered, none twice (internals.md §1.1).
func TestClusterSteadyLoadLosesNothing(t *testing.T) {
	nodes := failoverCluster(t, "steady")
	w := newWorkload(t, nodes, "steady", scaled(20_000), produceBatch)
	began := time.Now()
	w.start(produceVia, consumeVia)
	w.finish(scenarioBudget)
	t.Logf("steady: %d messages produced and consumed in %s", w.total, time.Since(began).Round(time.Millisecond))
	waitDispatched(t, nodes, 15*time.Second)
	for i, c := range w.clients {
		res, err := c.Consume(context.Background(), "steady", httpclient.ConsumeOptions{Max: consumeBatchMax, Wait: consumeWait})
		if err != nil || len(res.Messages) != 0 {
			t.Errorf("something left after the drain via n%d: %d messages, %v", i+1, len(res.Messages), err)
		}
	}
	if dups := w.verify("steady load"); dups != 0 {
		t.Fatalf("%d duplicates without any failure", dups)
	}
}

// ensure that kill -9 of a partition owner (not the metadata leader) under load loses nothing that got a 202: producers keep getting 202s from the live nodes, consumers ride out 502/503, and after the restart every accepted id is delivered (internals.md §1.7 "Broker process crash", "Node down").
func TestClusterOwnerKill9UnderLoadLosesNothing(t *testing.T) {
	nodes := failoverCluster(t, "ownercrash")
	victim := others(len(nodes), leaderIndex(t, nodes, 0, 1, 2))[0]
	w := pacedWorkload(t, nodes, "ownercrash")

	nodes[victim].kill9()
	killedAt, before, got := time.Now(), w.accepted.Load(), w.l.deliveries()
	w.waitAccepted(int(before)+outageAccepted, 30*time.Second)
	live := (victim + 1) % len(nodes)
	checkOwnerDown(t, nodes[live], fmt.Sprintf("n%d", live+1), "ownercrash", fmt.Sprintf("n%d", victim+1))
	w.waitDelivered(got+outageDelivered, 30*time.Second)
	holdDown(killedAt, ownerDownMin)
	t.Logf("owner n%d killed after %d accepted; %d more accepted by the live nodes in %s",
		victim+1, before, w.accepted.Load()-before, time.Since(killedAt).Round(time.Millisecond))

	nodes[victim].restart()
	t.Logf("owner n%d back %s after the kill", victim+1, time.Since(killedAt).Round(time.Millisecond))
	w.finishAfter(loadAfterRestart)
	w.verify("owner kill -9")
}

// ensure that kill -9 of the metadata leader under load loses nothing that got a 202, that the survivors elect a leader and take metadata writes again (the outage is measured and logged), and that after the restart every accepted id is delivered (internals.md §1.7, §9.7 "crash failover about 1 s").
func TestClusterLeaderKill9UnderLoadLosesNothing(t *testing.T) {
	nodes := failoverCluster(t, "leadercrash")
	leader := leaderIndex(t, nodes, 0, 1, 2)
	survivors := others(len(nodes), leader)
	probe := startMetaProbe(t, "probe", []*node{nodes[survivors[0]], nodes[survivors[1]]})
	w := pacedWorkload(t, nodes, "leadercrash")

	nodes[leader].kill9()
	killedAt, before, got := time.Now(), w.accepted.Load(), w.l.deliveries()
	outage, ok := probe.waitRecovered(killedAt, 30*time.Second)
	if !ok {
		t.Fatalf("no topic create succeeded within 30s of killing leader n%d; outcomes %v", leader+1, probe.outcomes(killedAt))
	}
	next := leaderIndex(t, nodes, survivors...)
	t.Logf("metadata writes unavailable for %s after kill -9 of leader n%d (new leader n%d); create outcomes since the kill: %v",
		outage.Round(time.Millisecond), leader+1, next+1, probe.outcomes(killedAt))
	w.waitAccepted(int(before)+outageAccepted, 30*time.Second)
	w.waitDelivered(got+outageDelivered, 30*time.Second)
	probe.halt()
	t.Logf("probe stopped %s after the kill", time.Since(killedAt).Round(time.Millisecond))

	nodes[leader].restart()
	t.Logf("old leader n%d back %s after the kill", leader+1, time.Since(killedAt).Round(time.Millisecond))
	w.finishAfter(loadAfterRestart)
	w.verify("leader kill -9")
	t.Logf("all %d topics placed", waitEveryTopicPlaced(t, nodes[leader], 30*time.Second))
}

// ensure that with two of three nodes killed at once (quorum lost) the survivor turns not ready, answers metadata writes 503 and still answers produces 202; after both restart at once every accepted id is delivered (internals.md §1.4, §1.7 "Raft quorum lost", api.md §2.5).
func TestClusterQuorumLossKeepsProduceAndLosesNothing(t *testing.T) {
	nodes := failoverCluster(t, "quorumloss")
	survivor := leaderIndex(t, nodes, 0, 1, 2) // the leader must notice it lost its quorum
	victims := others(len(nodes), survivor)
	w := pacedWorkload(t, nodes, "quorumloss")

	killAll(nodes[victims[0]], nodes[victims[1]])
	killedAt, before, got := time.Now(), w.accepted.Load(), w.l.deliveries()
	probe := startMetaProbe(t, "noquorum", []*node{nodes[survivor]})
	notReady := waitNotReady(t, nodes[survivor], killedAt, 15*time.Second)
	w.waitAccepted(int(before)+outageAccepted, 30*time.Second)
	w.waitDelivered(got+outageDelivered, 30*time.Second)
	refused := waitRefused(t, probe, killedAt, 20*time.Second)
	probe.halt()
	outcomes := probe.outcomes(killedAt)
	t.Logf("quorum lost (n%d and n%d killed, n%d left): not ready after %s; first 503 to a create after %s (the create took %s: %v); %d more produces got 202 in %s; create outcomes %v",
		victims[0]+1, victims[1]+1, survivor+1, notReady.Round(time.Millisecond), refused.end.Sub(killedAt).Round(time.Millisecond),
		refused.end.Sub(refused.start).Round(time.Millisecond), refused.err, w.accepted.Load()-before, time.Since(killedAt).Round(time.Millisecond), outcomes)
	if outcomes[http.StatusCreated] > 0 {
		t.Errorf("%d topic creates succeeded without a quorum", outcomes[http.StatusCreated])
	}

	restartAll(nodes[victims[0]], nodes[victims[1]])
	t.Logf("both back %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	w.finishAfter(loadAfterRestart)
	w.verify("quorum loss")
	// Creates the leader appended before it noticed the lost quorum may
	// commit once it is back: they answered 503 "the change may still be
	// applied" (api.md §2.5), so they count here but are not an error.
	t.Logf("all %d topics placed (the workload's and the creates that applied after all)",
		waitEveryTopicPlaced(t, nodes[victims[0]], 30*time.Second))
}

// checkOwnerDown asks live about topic while owner is down but not yet
// marked dead: describe answers 200 at once, with owner's partitions as
// placeholders, partial set, and every live owner's partitions real, those
// of other nodes fetched over node RPC (api.md §2.7); a consume pinned to one of owner's partitions answers 502, or
// 503 once the owner is marked dead (internals.md §1.4).
func checkOwnerDown(t *testing.T, live *node, liveID, topic, owner string) {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	tp, err := client(t, live).Topic(ctx, topic)
	took := time.Since(began)
	if err != nil {
		t.Errorf("describe via %s while %s is down: %v (after %s)", liveID, owner, err, took)
		return
	}
	pinned := -1
	for _, s := range tp.PartitionStats {
		switch {
		case s.OwnerNode == owner && s.Available():
			t.Errorf("describe via %s while %s is down: its partition %d reads as available: %+v", liveID, owner, s.Index, s)
		case s.OwnerNode != owner && !s.Available():
			t.Errorf("describe via %s while %s is down: partition %d of live %s is a placeholder: %+v", liveID, owner, s.Index, s.OwnerNode, s)
		case s.OwnerNode == owner && pinned < 0:
			pinned = s.Index
		}
	}
	if !tp.Partial || pinned < 0 {
		t.Errorf("describe via %s while %s is down: partial=%v, no partition of %s: %+v", liveID, owner, tp.Partial, owner, tp.PartitionStats)
		return
	}
	began = time.Now()
	resp, err := http.Get(fmt.Sprintf("%s/v1/topics/%s/consume?partition=%d", live.url, topic, pinned))
	if err != nil {
		t.Errorf("pinned consume of partition %d while %s is down: %v", pinned, owner, err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("pinned consume of partition %d while its owner %s is down: %d %s, want 502 (or 503 once marked dead)",
			pinned, owner, resp.StatusCode, body)
	}
	t.Logf("while %s is down: describe via %s took %s (partial); pinned consume of partition %d answered %d %q in %s",
		owner, liveID, took.Round(time.Millisecond), pinned, resp.StatusCode, strings.TrimSpace(string(body)), time.Since(began).Round(time.Millisecond))
}

// waitNotReady waits until n's /readyz stops answering 200 and returns
// how long after t0 that was.
func waitNotReady(t *testing.T, n *node, t0 time.Time, within time.Duration) time.Duration {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		resp, err := http.Get(n.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return time.Since(t0)
			}
		}
		time.Sleep(50 * time.Millisecond) // polling the node, bounded by the deadline
	}
	t.Errorf("node on %d still ready %s after losing its quorum", n.port, within)
	return 0
}

// waitRefused waits until a create sent at or after t0 was answered 503
// and returns the first such create.
func waitRefused(t *testing.T, p *metaProbe, t0 time.Time, within time.Duration) probeResult {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, r := range p.since(t0) {
			if r.status == http.StatusServiceUnavailable {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond) // polling the probe, bounded by the deadline
	}
	t.Errorf("no topic create answered 503 within %s of losing the quorum; outcomes %v", within, p.outcomes(t0))
	return probeResult{start: t0, end: t0}
}

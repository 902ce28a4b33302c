package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// A partition owner cut off from the network (docker network disconnect:
// not dead, its socket silent) under a steady load through the other two
// nodes (issue 15; internals.md §3.3, §3.4, §10.1). Consumers read each
// partition through its owner (pinned, never forwarded), so while the owner
// is cut only the dispatchers' commits (30 s budget) are addressed to it
// over node RPC: no short call times out on it and trips the
// deadline-driven liveness ping by chance.
const (
	// silentLoadBatch and silentLoadPace: two producers per live node, each
	// sending silentLoadBatch messages every silentLoadPace (about 800
	// messages a second in all).
	silentLoadBatch = 20
	silentLoadPace  = 100 * time.Millisecond
	// silentWarmupAccepted and silentSteadyDuration: the cut comes once the
	// load is warm and has run steadily this long (the baseline window).
	silentWarmupAccepted = 2_000
	silentSteadyDuration = 5 * time.Second
	// silentAfterHealDuration: the load goes on this long after the heal.
	silentAfterHealDuration = 5 * time.Second
	// silentDrainBudget bounds the wait for every accepted id to arrive.
	silentDrainBudget = 90 * time.Second
	// silentCutP99Bound bounds the produce-to-consume p99 of the messages
	// produced during the cut. Before, the cut owner's partitions (a third
	// of the load) held their records until the heal (20 s here; 30 s, the
	// commit budget, for a longer cut). Now the transport fails a
	// connection that stayed silent for 3 s with calls in flight (quicpeer
	// silentPeerAfterDuration, checked every 250 ms), and the dispatcher
	// reroutes the records of a commit hung for the 3 s reroute grace
	// counted from its start (produce rerouteGraceDuration): a record
	// waits about 3.5 s at most, plus a rescan (1 s), a sibling commit and
	// a long poll: about 5 s. Twice that leaves room for a loaded 2-CPU
	// host and stays well under the old hold.
	silentCutP99Bound = 10 * time.Second
)

// ensure that while a partition owner is cut off the network for 20 s, the
// records the other nodes accept for its partitions reach consumers through
// sibling partitions within seconds (p99 well under the old hold; only the
// probes, one record per failing destination per accepting node, wait for
// the heal), and that nothing accepted is lost (internals.md §1.1, §1.7,
// §3.3, §3.4).
func TestSilentOwnerCutReroutesWithinSeconds(t *testing.T) {
	c := startDockerCluster(t, 3)
	nodes := c.asNodes()
	const topic = "silent"
	_, err := client(t, nodes[0]).CreateTopic(context.Background(), httpclient.TopicSpec{
		Name: topic, Partitions: failoverPartitions, VisibilityTimeoutMs: failoverVisibilityMs})
	if err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, client(t, nodes[2]), topic)
	leader := leaderIndex(t, nodes, 0, 1, 2)
	victim := others(len(nodes), leader)[0]
	live := others(len(nodes), victim)
	owners := partitionOwners(t, c, nodes[leader], topic)

	ld := newTimedLoad(t, nodes, topic, silentLoadBatch, silentLoadPace)
	var cutParts []int
	for p, o := range owners {
		if o == victim {
			cutParts = append(cutParts, p)
		}
		ld.startConsumer(o, p)
	}
	if len(cutParts) == 0 {
		t.Fatalf("n%d owns no partition of %s: %v", victim+1, topic, owners)
	}
	t.Logf("cutting n%d (owner of partitions %v; n%d leads); load through n%d and n%d",
		victim+1, cutParts, leader+1, live[0]+1, live[1]+1)
	ld.startProducers(live[0], live[1], live[0], live[1])
	ld.waitUntil("warm-up", 60*time.Second, func() bool {
		return ld.accepted.Load() >= silentWarmupAccepted && ld.delivered() >= silentWarmupAccepted/2
	})
	steady := time.Now()
	time.Sleep(silentSteadyDuration) // the baseline window of the load, not a synchronization

	c.cut(c.nodes[victim])
	cutAt := time.Now()
	holdDown(cutAt, networkCutDuration)
	healAt := time.Now()
	c.heal(c.nodes[victim])
	c.waitReady(c.nodes[victim])
	time.Sleep(time.Until(healAt.Add(silentAfterHealDuration))) // load after the heal, not a synchronization
	ld.stopProducing()
	end := time.Now()
	ld.waitUntil("every accepted id delivered", silentDrainBudget, ld.l.complete)
	ld.stop()

	before := ld.latencies(steady, cutAt, silentCutP99Bound)
	during := ld.latencies(cutAt, healAt, silentCutP99Bound)
	after := ld.latencies(healAt, end, silentCutP99Bound)
	t.Logf("produce-to-consume before the cut (%s): %s", cutAt.Sub(steady).Round(time.Millisecond), before)
	t.Logf("produce-to-consume during the cut (%s): %s", healAt.Sub(cutAt).Round(time.Millisecond), during)
	t.Logf("produce-to-consume after the heal (%s): %s", end.Sub(healAt).Round(time.Millisecond), after)
	lostIDs, dups := ld.l.report()
	accepted, _ := ld.l.counts()
	t.Logf("ledger: %d accepted, %d lost, %d duplicates, %d delivered without a 202 seen; client failures: %s\n\t%s",
		accepted, len(lostIDs), dups, ld.l.unaccepted(), ld.failures.String(), ld.failures.examples())
	if len(lostIDs) > 0 || len(ld.l.mismatch) > 0 {
		t.Fatalf("lost %d accepted messages (e.g. %v); %d delivered with other bytes (e.g. %v)",
			len(lostIDs), first(lostIDs), len(ld.l.mismatch), first(ld.l.mismatch))
	}
	if during.ids == 0 || during.delivered != during.ids {
		t.Fatalf("during the cut: %s; every id sent then must be delivered", during)
	}
	// Each accepting node keeps one record per failing destination as its
	// probe, on its own partition, until the owner answers (§3.3, §3.4).
	probes := len(cutParts) * len(live)
	if during.p99 > silentCutP99Bound || during.over > probes {
		t.Fatalf("during the cut: %s; want p99 <= %s and at most %d (the probes) over it", during, silentCutP99Bound, probes)
	}
}

// partitionOwners maps each partition of topic to its owner's index in c,
// as n describes the topic.
func partitionOwners(t *testing.T, c *dockerCluster, n *node, topic string) map[int]int {
	t.Helper()
	tp, err := client(t, n).Topic(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]int{}
	for _, s := range tp.PartitionStats {
		for i, nd := range c.nodes {
			if nd.id == s.OwnerNode {
				out[s.Index] = i
			}
		}
	}
	if len(out) != tp.Partitions {
		t.Fatalf("owners of %s: %+v", topic, tp.PartitionStats)
	}
	return out
}

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/narad/narad/adapters/httpclient"
)

// The delivery contract checked from recorded histories (internals.md §1,
// §15.1): a parent topic and a delay child under the recorded workload
// while nodes are killed with -9 (partition owners and the Raft leader)
// and restarted, and, on the container cluster, cut off the network. At
// the end the ledgers must hold every accepted id on every path, and
// porcupine must find a valid order for every (path, message, copy).
const (
	// histVisibilityMs keeps dropped and stranded leases short.
	histVisibilityMs = 5_000
	// histDelay is the delay child's delay.
	histDelay = 1500 * time.Millisecond
	// histOutageAccepted more ids must get a 202 from the live nodes
	// during each outage, and histBetweenAccepted between two faults.
	histOutageAccepted  = 300
	histBetweenAccepted = 300
	// histDrainBudget bounds the drain after the load.
	histDrainBudget = 90 * time.Second
	// histRoundsEnv sets how many kill rounds the loopback test runs
	// (default 2: an owner, then the leader); the longer mode, e.g. 12,
	// alternates them.
	histRoundsEnv = "NARAD_E2E_HISTORY_ROUNDS"
	// histCutDuration is how long a container stays off the network.
	histCutDuration = 10 * time.Second
)

// ensure that the histories of produce, delivery, ack, extend and nack on a parent topic and its delay child, under kill -9 and restart of partition owners and of the Raft leader on a 3-node loopback cluster, fit the delivery contract: nothing delivered that was not produced, no delay child early, no redelivery after a confirmed ack unless a kill explains it, and every accepted message delivered on every path (internals.md §1, §15.1).
func TestHistoryDeliveryContractUnderKills(t *testing.T) {
	rounds := 2
	if v := os.Getenv(histRoundsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("%s=%q: want a round count", histRoundsEnv, v)
		}
		rounds = n
	}
	nodes := startCluster(t, 3)
	d := newHistCluster(t, nodes, "hist")
	d.start([]int{0, 1, 2}, []int{0, 1, 2})
	d.waitAccepted(histBetweenAccepted, 30*time.Second)
	all := []int{0, 1, 2}
	for round := range rounds {
		leader := leaderIndex(t, nodes, all...)
		victim, what := others(len(nodes), leader)[(round/2)%2], "a follower"
		if round%2 == 1 {
			victim, what = leader, "the leader"
		}
		n := nodes[victim]
		d.outage(victim, "kill", "kill -9 of "+what, n.kill9, n.restart, ownerDownMin)
		leaderIndex(t, nodes, all...)
		d.waitAccepted(int(d.accepted.Load())+histBetweenAccepted, 30*time.Second)
	}
	d.finish(histDrainBudget)
	d.check("kills")
}

// ensure that the histories on the container cluster fit the delivery contract through docker kill of an owner and network cuts of an owner and of the Raft leader (internals.md §1.7 "Node down", §15.1); skipped when no Docker engine answers.
func TestHistoryContainersKillAndNetworkCut(t *testing.T) {
	c := startDockerCluster(t, 3)
	nodes := c.asNodes()
	d := newHistCluster(t, nodes, "hist")
	d.start([]int{0, 1, 2}, []int{0, 1, 2})
	d.waitAccepted(histBetweenAccepted, 60*time.Second)
	all := []int{0, 1, 2}
	owner := func() int { return others(len(nodes), leaderIndex(t, nodes, all...))[0] }
	for _, step := range []struct {
		name, kind string
		victim     func() int
		fail, heal func(*dockerNode)
		down       time.Duration
	}{
		{"docker kill of an owner", "kill", owner, c.kill, c.restart, ownerDownMin},
		{"network cut of an owner", "cut", owner, c.cut, c.heal, histCutDuration},
		{"network cut of the leader", "cut", func() int { return leaderIndex(t, nodes, all...) }, c.cut, c.heal, histCutDuration},
	} {
		v := step.victim()
		nd := c.nodes[v]
		d.outage(v, step.kind, step.name, func() { step.fail(nd) }, func() { step.heal(nd); c.waitReady(nd) }, step.down)
		leaderIndex(t, nodes, all...)
		d.waitAccepted(int(d.accepted.Load())+histBetweenAccepted, 60*time.Second)
	}
	d.finish(histDrainBudget)
	d.check("containers")
}

// newHistCluster creates parent (failoverPartitions partitions) and its
// delay child parent-delayed through node 1, waits until both are placed,
// and returns a recorded workload over them.
func newHistCluster(t *testing.T, nodes []*node, parent string) *histDriver {
	t.Helper()
	ctx := context.Background()
	c := client(t, nodes[0])
	child := parent + "-delayed"
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: parent, Partitions: failoverPartitions, VisibilityTimeoutMs: histVisibilityMs}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: child, Parent: parent, VisibilityTimeoutMs: histVisibilityMs,
		FanoutDelayMs: histDelay.Milliseconds()}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{parent, child} {
		waitPlaced(t, client(t, nodes[len(nodes)-1]), name)
	}
	w := newWorkload(t, nodes, parent, histCap, histBatch)
	return newHistDriver(w, []string{parent, child}, map[string]time.Duration{child: histDelay}, histVisibilityMs*time.Millisecond)
}

// outage fails node i (kind "kill": its acks may be forgotten; "cut": off
// the network), keeps it down at least down and until histOutageAccepted
// more ids got a 202 from the live nodes, heals it, and records the window.
func (d *histDriver) outage(i int, kind, name string, fail, heal func(), down time.Duration) {
	d.t.Helper()
	f := histFault{Node: i + 1, Kind: kind, Start: d.rec.now()}
	began, before := time.Now(), d.accepted.Load()
	fail()
	f.Down = d.rec.now()
	d.waitAccepted(int(before)+histOutageAccepted, 30*time.Second)
	holdDown(began, down)
	during := d.accepted.Load() - before
	heal()
	f.End = d.rec.now()
	d.rec.fault(f)
	d.t.Logf("%s (n%d): %d accepted while it was down; back after %s", name, i+1, during, time.Since(began).Round(time.Millisecond))
}

// check verifies the run: the ledgers (every accepted id delivered on
// every path, byte-identical), one message per stored copy, and
// porcupine's verdict. A failing history (every history under
// -artifacts) is written with the violations' visualization, and the test
// prints where.
func (d *histDriver) check(name string) {
	t := d.t
	t.Helper()
	d.checked.Store(true)
	ops, faults := d.rec.snapshot()
	for _, p := range d.paths {
		l := d.ledgers[p]
		lost, dups := l.report()
		accepted, _ := l.counts()
		t.Logf("%s %s: %d accepted, %d lost, %d duplicates, %d delivered without a 202 seen", name, p, accepted, len(lost), dups, l.unaccepted())
		if len(lost) > 0 || len(l.mismatch) > 0 {
			t.Errorf("%s %s: lost %d accepted messages (e.g. %v); %d delivered with other bytes (e.g. %v)",
				name, p, len(lost), first(lost), len(l.mismatch), first(l.mismatch))
		}
	}
	holder := map[string]string{}
	for _, op := range ops {
		if op.Kind != kindDeliver {
			continue
		}
		k := op.Path + "@" + op.Copy
		if id, ok := holder[k]; ok && id != op.ID {
			t.Errorf("%s: copy %s delivered as %s and as %s", name, k, id, op.ID)
		}
		holder[k] = op.ID
	}
	m := contractModel{delays: d.delays, faults: faults}
	began := time.Now()
	v := checkContract(m, histOperations(ops, d.paths))
	redelivered, widest := postAckRedeliveries(ops, faults)
	t.Logf("%s: %d operations (%s); client failures: %s", name, len(ops), histOutcomeCounts(ops), d.failures.String())
	t.Logf("%s: porcupine %s over %d (path, message, copy) parts in %s; %d redeliveries after a confirmed ack, each within %s before a kill (widest gap %s)",
		name, v.Result, v.Parts, time.Since(began).Round(time.Millisecond), redelivered, histAckLossWindow, widest.Round(time.Millisecond))
	if v.Result == porcupine.Ok && !t.Failed() && !historyKeepArtifacts() {
		return
	}
	dir := historyArtifacts(t)
	file := filepath.Join(dir, "history.jsonl")
	if err := writeHistory(file, historyRecord{Paths: d.paths, Delays: d.delays, Faults: faults}, ops); err != nil {
		t.Errorf("writing the history: %v", err)
	}
	t.Logf("%s: history written to %s", name, file)
	if v.Result == porcupine.Ok {
		return
	}
	html, js, err := writeViolations(dir, m, v)
	if err != nil {
		t.Errorf("writing the violations: %v", err)
	}
	t.Errorf("%s: history %s against the delivery contract: %d of %d parts have no valid order; visualization %s, operations %s",
		name, v.Result, v.Bad, v.Parts, html, js)
}

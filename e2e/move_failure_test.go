package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// moveCluster is three nodes holding topic big (8 partitions, 40,000
// messages in l) and a fourth that joined and is the destination of the
// first move, whose source is returned once that move shows.
func moveCluster(t *testing.T, seed uint64) (nodes []*node, clients []*httpclient.Client, l *ledger, source string) {
	t.Helper()
	port, nodes := scaleStartThree(t, 4)
	clients = make([]*httpclient.Client, 4)
	for i, n := range nodes[:3] {
		clients[i] = client(t, n)
	}
	ctx := context.Background()
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3"}, 3)
	if _, err := clients[0].CreateTopic(ctx, httpclient.TopicSpec{Name: "big", Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[0], "big")
	l = newLedger()
	produceBatches(ctx, t, clients[:3], "big", "b", seed, 40_000, 500, l)
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	clients[3] = client(t, nodes[3])
	deadline := time.Now().Add(scaleJoinTimeout)
	for time.Now().Before(deadline) {
		if mv, err := clients[0].Moves(ctx, false); err == nil && len(mv) > 0 {
			return nodes, clients, l, mv[0].From
		}
		time.Sleep(20 * time.Millisecond) // polling for the first move, bounded by the deadline
	}
	t.Fatal("no partition moved to the new node")
	return nil, nil, nil, ""
}

// TestMoveSurvivesItsSourceKilled fills a topic, grows the cluster so the
// leader moves partitions to the new node, and kills -9 the source of the
// first move seen while it copies (or just after, if it was quick), then
// starts it again: the move resumes or stands, the topic's owners settle,
// and every accepted message is consumed (internals.md §11.3, §11.6).
func TestMoveSurvivesItsSourceKilled(t *testing.T) {
	nodes, clients, l, source := moveCluster(t, 31)
	var victim *node
	for i, n := range nodes[:3] {
		if fmt.Sprintf("n%d", i+1) == source {
			victim = n
		}
	}
	victim.kill9()
	t.Logf("killed %s, the source of a move", source)
	victim.restart()
	scaleWaitBalanced(t, clients[3], 2, 2)
	scaleDrain(t, "big", l, clients)
	lost, dups := l.report()
	t.Logf("%d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
}

// TestMoveDestinationKilledLeavesTheSource kills -9 the destination of
// the moves in flight: once it has been dead two minutes the leader clears
// them (internals.md §11.2, DeadTargetAbortAfter) and their partitions
// stay with their sources, which keep taking messages; when the
// destination is back (it owns what flipped to it before the kill), every
// accepted message is consumed. It waits out the cluster's timers (about
// three minutes): NARAD_E2E_LONG=1 runs it.
func TestMoveDestinationKilledLeavesTheSource(t *testing.T) {
	if os.Getenv(longScenariosEnv) != "1" {
		t.Skipf("waits out the dead-target abort; set %s=1 to run it", longScenariosEnv)
	}
	nodes, clients, l, _ := moveCluster(t, 41)
	ctx := context.Background()
	nodes[3].kill9()
	t.Log("killed n4, the destination of the moves in flight")
	traffic := scaleStartTraffic(t, "big", l, clients[:3], clients[:3])
	deadline := time.Now().Add(deadMarkWithin + 3*time.Minute)
	for {
		mv, err := clients[0].Moves(ctx, false)
		if err == nil && len(mv) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("moves to the dead n4 never cleared: %+v (%v)", mv, err)
		}
		time.Sleep(time.Second) // waiting out the cluster's timers, bounded by the deadline
	}
	traffic.halt()
	// A move that flipped before the kill left its partition on n4, which
	// keeps it while dead (a dead owner's partitions stay): n4 comes back
	// for the drain.
	nodes[3].restart()
	scaleDrain(t, "big", l, clients)
	lost, dups := l.report()
	t.Logf("%d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
}

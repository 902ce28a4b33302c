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
	// The returning destination's sweep removes the staging of the moves
	// cleared while it was dead; the leader plans again and the former
	// owners reclaim their copies.
	scaleWaitBalanced(t, clients[3], 2, 2)
	waitDisksMatchOwners(t, clients[0], "big", nodes)
}

// TestMoveAbortedMidCopy grows the cluster and aborts the moves to the new
// node as they start (api.md §2.17 abort): an aborted move leaves its
// partition with its source, the destination drops its staging, the
// leader plans again, the cluster settles balanced with every former
// owner's copy reclaimed, and every accepted message is consumed.
func TestMoveAbortedMidCopy(t *testing.T) {
	nodes, clients, l, _ := moveCluster(t, 51)
	ctx := context.Background()
	aborted := 0
	deadline := time.Now().Add(scaleJoinTimeout)
	for aborted < 2 && time.Now().Before(deadline) {
		mvs, err := clients[0].Moves(ctx, false)
		if err != nil || len(mvs) == 0 {
			time.Sleep(20 * time.Millisecond) // polling for the next move, bounded by the deadline
			continue
		}
		mv := mvs[0]
		if _, err := clients[1].AbortMove(ctx, mv.Topic, mv.Partition, mv.To); err != nil {
			t.Logf("abort of %s/%d: %v (it may have flipped first)", mv.Topic, mv.Partition, err)
			continue
		}
		aborted++
		tp, err := clients[0].Topic(ctx, mv.Topic)
		if err != nil {
			t.Fatal(err)
		}
		if owner := tp.PartitionStats[mv.Partition].OwnerNode; owner != mv.From {
			t.Fatalf("aborted %s/%d is owned by %s, want its source %s", mv.Topic, mv.Partition, owner, mv.From)
		}
		t.Logf("aborted the move of %s/%d from %s to %s", mv.Topic, mv.Partition, mv.From, mv.To)
	}
	if aborted == 0 {
		t.Fatal("no move could be aborted while it ran")
	}
	scaleWaitBalanced(t, clients[3], 2, 2)
	scaleDrain(t, "big", l, clients)
	lost, dups := l.report()
	t.Logf("%d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
	waitDisksMatchOwners(t, clients[0], "big", nodes)
}

// TestMoveSurvivesTheLeaderKilled kills -9 the metadata leader while the
// moves to a new node run, so flips in flight lose their answer or their
// leader (internals.md §11.5), then starts it again: every move resolves
// (flipped or planned again), the cluster settles balanced, and every
// accepted message is consumed.
func TestMoveSurvivesTheLeaderKilled(t *testing.T) {
	nodes, clients, l, _ := moveCluster(t, 61)
	ctx := context.Background()
	var leader *node
	ms, err := clients[3].Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Leader {
			for i, n := range nodes {
				if fmt.Sprintf("n%d", i+1) == m.ID {
					leader = n
				}
			}
		}
	}
	if leader == nil || leader == nodes[3] {
		t.Fatalf("leader among %+v: want one of the first three", ms)
	}
	leader.kill9()
	t.Log("killed the metadata leader while moves run")
	leader.restart()
	scaleWaitBalanced(t, clients[3], 2, 2)
	scaleDrain(t, "big", l, clients)
	lost, dups := l.report()
	t.Logf("%d accepted, %d lost, %d duplicates", len(l.accepted), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched", len(lost), first(lost), len(l.mismatch))
	}
	waitDisksMatchOwners(t, clients[0], "big", nodes)
}

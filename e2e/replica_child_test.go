package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// replicaReadKeys replays partition part of topic from offset 0 to its high
// watermark through c and returns the keys it holds.
func replicaReadKeys(ctx context.Context, t *testing.T, c *httpclient.Client, topic string, part int) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	for off := int64(0); ; off++ {
		r, err := c.Replay(ctx, topic, part, off)
		if err != nil {
			t.Fatalf("replay %s/%d@%d: %v", topic, part, off, err)
		}
		if r.Status == 204 {
			return keys
		}
		if r.Status != 200 {
			t.Fatalf("replay %s/%d@%d: %d %s", topic, part, off, r.Status, r.Reason)
		}
		keys[string(r.Message.Key)] = true
	}
}

// TestReplicaChildSurvivesTheLossOfItsParentsOwner creates a replica child
// in the same call as its link (api.md §5.3, internals.md §13.1): each
// child partition lands away from the owner of the parent's partition of
// the same index. Once every keyed record is fanned out, the owner of a
// parent partition is killed for good, and every record is still
// readable from the partitions on the survivors, those of the dead owner's
// parent partitions from the child.
func TestReplicaChildSurvivesTheLossOfItsParentsOwner(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := context.Background()
	c := client(t, nodes[0])
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "orders", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "orders")
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "orders-dr", Parent: "orders"}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "orders-dr")
	parent, child := replicaOwners(ctx, t, c, "orders"), replicaOwners(ctx, t, c, "orders-dr")
	for p, o := range parent {
		if child[p] == o {
			t.Fatalf("child partition %d shares node %s with its parent's: parent %v, child %v", p, o, parent, child)
		}
	}

	l := newLedger()
	produceBatches(ctx, t, []*httpclient.Client{client(t, nodes[1]), client(t, nodes[2])}, "orders", "o", 21, 600, 50, l)
	deadline := time.Now().Add(60 * time.Second)
	for {
		held := map[string]bool{}
		for p := range child {
			for k := range replicaReadKeys(ctx, t, c, "orders-dr", p) {
				held[k] = true
			}
		}
		if len(held) == len(l.accepted) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child holds %d of %d records after 60 s", len(held), len(l.accepted))
		}
		time.Sleep(200 * time.Millisecond) // waiting for the fan-out, bounded by the deadline
	}

	lost := parent[0]
	var survivor *httpclient.Client
	for i, n := range nodes {
		if fmt.Sprintf("n%d", i+1) == lost {
			n.kill9()
		} else if survivor == nil {
			survivor = client(t, n)
		}
	}
	readable, fromChild := map[string]bool{}, 0
	for _, tp := range []struct {
		name   string
		owners map[int]string
	}{{"orders", parent}, {"orders-dr", child}} {
		for p, o := range tp.owners {
			if o == lost {
				continue
			}
			for k := range replicaReadKeys(ctx, t, survivor, tp.name, p) {
				if tp.name == "orders-dr" && parent[p] == lost {
					fromChild++
				}
				readable[k] = true
			}
		}
	}
	missing := 0
	for id := range l.accepted {
		if !readable[id] {
			missing++
		}
	}
	t.Logf("%s killed: %d of %d records readable, %d of them only through the child", lost, len(readable), len(l.accepted), fromChild)
	if missing > 0 || fromChild == 0 {
		t.Fatalf("%d records unreadable after the loss of %s; %d read from the child's copies of its partitions", missing, lost, fromChild)
	}
}

// replicaOwners maps each partition of topic to its owner.
func replicaOwners(ctx context.Context, t *testing.T, c *httpclient.Client, topic string) map[int]string {
	t.Helper()
	tp, err := c.Topic(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, s := range tp.PartitionStats {
		out[s.Index] = s.OwnerNode
	}
	return out
}

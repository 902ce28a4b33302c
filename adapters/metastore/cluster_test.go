package metastore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/ports"
	"github.com/narad/narad/ports/porttest"
)

// Ensure that a single-node store keeps the MetadataStore contract.
func TestSingleNodeConformance(t *testing.T) {
	porttest.MetadataStore(t, func(t *testing.T) ports.MetadataStore {
		n := startNode(t, "solo", freeAddr(t), t.TempDir(), StoreConfig{})
		leaderOf(t, n)
		return n.store
	})
}

// Ensure that a single node bootstraps alone, restarts from its data dir
// with its views, and resumes at its applied index.
func TestSingleNodeRestartsFromDisk(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	n := startNode(t, "solo", addr, dir, StoreConfig{})
	leaderOf(t, n)
	applied := mustPropose(t, n.store, createTopic("kept", 1))
	n.stop()

	n = startNode(t, "solo", addr, dir, StoreConfig{})
	if got := n.store.AppliedIndex(); got < applied.Index {
		t.Fatalf("reopened at applied index %d, below %d", got, applied.Index)
	}
	mustTopic(t, n, "kept")
	leaderOf(t, n)
	mustPropose(t, n.store, createTopic("after", 2))
	mustTopic(t, n, "after")
}

// Ensure that three nodes on loopback agree: a proposal on any node is read
// on all after a barrier; a stopped leader is replaced and the cluster keeps
// accepting proposals; the old leader restarts from disk and catches up.
func TestThreeNodeCluster(t *testing.T) {
	nodes := startCluster(t, 3, StoreConfig{})
	leaderOf(t, nodes...)
	for i, n := range nodes {
		got := mustPropose(t, n.store, createTopic(fmt.Sprintf("from-%s", n.id), i+1))
		if !got.Result.OK() {
			t.Fatalf("%s: %+v", n.id, got)
		}
		mustTopic(t, n, fmt.Sprintf("from-%s", n.id)) // read-your-write on the proposing node
	}
	views := sameViews(t, nodes...)
	if strings.Count(views, "topic from-") != 3 {
		t.Fatalf("views:\n%s", views)
	}

	old := leaderOf(t, nodes...)
	checkTenure(t, old, time.Time{}, nodes...)
	old.stop()
	var rest []*node
	for _, n := range nodes {
		if n != old {
			rest = append(rest, n)
		}
	}
	stoppedAt := time.Now()
	next := leaderOf(t, rest...)
	if next == old {
		t.Fatal("stopped node still leads")
	}
	checkTenure(t, next, stoppedAt, rest...)
	waitFor(t, 20*time.Second, "the leader to see its link to the stopped node fail", func() bool {
		failed, connected := next.store.RaftLink(old.addr)
		return failed.After(stoppedAt) && !connected.IsZero() && connected.Before(failed)
	})
	mustPropose(t, rest[0].store, createTopic("while-down", 10))
	mustPropose(t, rest[1].store, createTopic("while-down-2", 11))

	back := startNode(t, old.id, old.addr, old.dir, StoreConfig{})
	if !back.store.host.nh.HasNodeInfo(metadataShardID, back.store.replicaID) {
		t.Fatal("restarted node lost its Raft state")
	}
	waitFor(t, 20*time.Second, "the restarted node to catch up", func() bool {
		_, ok, _ := back.store.Topic("while-down-2")
		return ok
	})
	sameViews(t, append(rest, back)...)
	waitFor(t, 20*time.Second, "caught up after restart", back.store.CaughtUp)
}

// Ensure that a state machine left without Raft state is never served: a
// node that would bootstrap over it refuses to start, and a joiner sets it
// aside and starts empty (to rebuild from the leader).
func TestStateWithoutRaftStateIsNotTrusted(t *testing.T) {
	dir, addr := t.TempDir(), freeAddr(t)
	n := startNode(t, "solo", addr, dir, StoreConfig{})
	leaderOf(t, n)
	mustPropose(t, n.store, createTopic("old", 1))
	n.stop()
	if err := os.RemoveAll(filepath.Join(dir, "raft")); err != nil {
		t.Fatal(err)
	}

	h, err := NewHost(HostConfig{NodeID: "solo", RaftAddr: addr, DataDir: dir, RTT: testRTT, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.OpenMetadata(StoreConfig{})
	h.Close()
	if !errors.Is(err, ErrStaleState) {
		t.Fatalf("bootstrap over orphan state: %v", err)
	}

	j := startNode(t, "solo", addr, dir, StoreConfig{Join: true})
	if _, ok, _ := j.store.Topic("old"); ok || j.store.AppliedIndex() != 0 {
		t.Fatal("the joiner serves views no log backs")
	}
	aside, _ := filepath.Glob(filepath.Join(dir, "fsm", "shard-1.stale-*"))
	if len(aside) != 1 {
		t.Fatalf("old state not set aside: %v", aside)
	}
}

// checkTenure checks that leader reports when it started to lead, not
// before after, and that no other node claims a tenure (internals.md §9.3:
// a leader promotes only after leading 12 s).
func checkTenure(t *testing.T, leader *node, after time.Time, nodes ...*node) {
	t.Helper()
	waitFor(t, 10*time.Second, "the leader's tenure", func() bool { _, ok := leader.store.LeaderSince(); return ok })
	since, _ := leader.store.LeaderSince()
	if since.Before(after) || since.After(time.Now()) {
		t.Fatalf("%s leads since %s, want between %s and now", leader.id, since, after)
	}
	for _, n := range nodes {
		if _, ok := n.store.LeaderSince(); ok && n != leader {
			t.Fatalf("follower %s reports a tenure", n.id)
		}
	}
}

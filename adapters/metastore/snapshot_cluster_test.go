package metastore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4"

	"github.com/narad/narad/domain/meta"
)

// compactLog snapshots the leader and waits until its log no longer starts
// at index 1, so a joiner cannot be served by replication alone.
func compactLog(t *testing.T, n *node) {
	t.Helper()
	opt := dragonboat.SnapshotOption{CompactionOverhead: 2, OverrideCompactionOverhead: true}
	logs, err := n.host.nh.GetLogReader(metadataShardID)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "log compaction", func() bool {
		// Rejected while an automatic snapshot runs or when one exists at
		// the current index; either way the range tells.
		_, _ = n.host.nh.SyncRequestSnapshot(ctxFor(t, 5*time.Second), metadataShardID, opt)
		first, _ := logs.GetRange()
		return first > 1
	})
}

// Ensure that a node joining after the log was compacted is brought up by a
// streamed snapshot plus the log tail, and ends with the same views as the
// nodes that applied every entry; then exercise the membership changes the
// join use case drives: stage as non-voter, promote, remove for good.
func TestJoinAfterCompactionGetsSnapshotAndTail(t *testing.T) {
	cfg := StoreConfig{SnapshotEntries: 10, CompactionOverhead: 2}
	nodes := startCluster(t, 3, cfg)
	leader := leaderOf(t, nodes...)
	for i := 0; i < 40; i++ {
		mustPropose(t, leader.store, createTopic(fmt.Sprintf("t%02d", i), i+1))
	}
	for _, n := range nodes { // whoever leads when n4 joins must need a snapshot
		compactLog(t, n)
	}
	for i := 40; i < 45; i++ { // the tail after the snapshot
		mustPropose(t, leader.store, createTopic(fmt.Sprintf("t%02d", i), i+1))
	}

	addr := freeAddr(t)
	id := meta.ReplicaID("n4")
	if err := leader.store.AddNonVoter(ctxFor(t, 10*time.Second), id, addr); err != nil {
		t.Fatal(err)
	}
	joiner := startNode(t, "n4", addr, t.TempDir(), StoreConfig{Join: true, NonVoter: true, SnapshotEntries: 10, CompactionOverhead: 2})
	waitFor(t, 30*time.Second, "the joiner to catch up", func() bool {
		_, ok, _ := joiner.store.Topic("t44")
		return ok
	})
	if joiner.store.sm.restores.Load() == 0 {
		t.Fatal("the joiner replayed the log instead of installing a snapshot")
	}
	sameViews(t, append(nodes, joiner)...)

	m, err := leader.store.Membership(ctxFor(t, 10*time.Second))
	if err != nil || m.NonVoters[id] != addr {
		t.Fatalf("staged membership %+v, %v", m, err)
	}
	if err := leader.store.AddVoter(ctxFor(t, 10*time.Second), id, addr); err != nil {
		t.Fatal(err)
	}
	m, err = leader.store.Membership(ctxFor(t, 10*time.Second))
	if _, voter := m.Voters[id]; err != nil || !voter || len(m.NonVoters) != 0 {
		t.Fatalf("promoted membership %+v, %v", m, err)
	}
	if err := leader.store.RemoveReplica(ctxFor(t, 10*time.Second), id); err != nil {
		t.Fatal(err)
	}
	err = leader.store.AddVoter(ctxFor(t, 10*time.Second), id, addr)
	if !errors.Is(err, meta.ErrRefused) && !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("re-adding a removed replica: %v", err)
	}
	m, _ = leader.store.Membership(ctxFor(t, 10*time.Second))
	if _, back := m.Voters[id]; back {
		t.Fatal("a removed replica came back")
	}
}

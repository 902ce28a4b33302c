package metastore

import (
	"testing"
	"time"
)

// Ensure that an initial member that starts after its peers bootstrapped
// without it, and therefore starts join-only as a voter (internals §9.2:
// its probe found them configured, bootstrap/probe.go), is a real voter of
// their configuration: it catches up from the leader, records its voter
// role after a snapshot, and takes over the leadership when handed it. A
// replica started as a non-voter that replays its own "add voter" would
// vote but never campaign.
func TestLateInitialMemberJoinsAsVoter(t *testing.T) {
	members := map[string]string{"n1": freeAddr(t), "n2": freeAddr(t), "n3": freeAddr(t)}
	cfg := StoreConfig{InitialMembers: members}
	n1 := startNode(t, "n1", members["n1"], t.TempDir(), cfg)
	n3 := startNode(t, "n3", members["n3"], t.TempDir(), cfg)
	leader := leaderOf(t, n1, n3)
	mustPropose(t, leader.store, createTopic("before-n2", 1))

	cfg.Join, cfg.JoinAsVoter = true, true
	n2 := startNode(t, "n2", members["n2"], t.TempDir(), cfg)
	if !n2.store.JoinOnly() {
		t.Fatal("n2 did not start join-only")
	}
	waitFor(t, 20*time.Second, "n2 to catch up from the leader", func() bool {
		_, ok, _ := n2.store.Topic("before-n2")
		return ok
	})
	waitFor(t, 20*time.Second, "n2's voter role to be recorded", func() bool {
		role, err := readRole(n2.host.rolePath())
		return err == nil && role == roleVoter
	})
	waitFor(t, 30*time.Second, "n2 to take the leadership when handed it", func() bool {
		if n2.store.IsLeader() {
			return true
		}
		for _, n := range []*node{n1, n3} {
			if n.store.IsLeader() {
				_ = n.host.nh.RequestLeaderTransfer(metadataShardID, n2.store.replicaID)
			}
		}
		return false
	})
	mustPropose(t, n2.store, createTopic("n2-leads", 2))
}

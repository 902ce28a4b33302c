package metastore

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/application/membership"
)

// Ensure that the admission use case grows a real single-node cluster: two
// joiners become voters, the fourth node is staged as a non-voter, and every
// node ends with the same views.
func TestAdmitterGrowsARealCluster(t *testing.T) {
	n1 := startNode(t, "n1", freeAddr(t), t.TempDir(), StoreConfig{})
	leaderOf(t, n1)
	mustPropose(t, n1.store, createTopic("before-growth", 1))
	admit := membership.NewAdmitter(n1.store, membership.DefaultMaxVoters)
	nodes := []*node{n1}
	want := []membership.Status{membership.StatusVoter, membership.StatusVoter, membership.StatusStaged}
	for i, st := range want {
		id, addr := fmt.Sprintf("n%d", i+2), freeAddr(t)
		got := admitRetrying(t, admit, membership.Join{NodeID: id, RaftAddr: addr})
		nonVoter := got == membership.StatusStaged || got == membership.StatusDeferred
		if got != st && !(nonVoter && st == membership.StatusStaged) {
			t.Fatalf("admit %s: %q, want %q", id, got, st)
		}
		nodes = append(nodes, startNode(t, id, addr, t.TempDir(), StoreConfig{Join: true, NonVoter: nonVoter}))
		waitFor(t, 20*time.Second, id+" to catch up", func() bool {
			_, ok, _ := nodes[len(nodes)-1].store.Topic("before-growth")
			return ok
		})
	}
	mustPropose(t, nodes[3].store, createTopic("after-growth", 2)) // proposed on the non-voter
	sameViews(t, nodes...)
	m, err := n1.store.Membership(ctxFor(t, 10*time.Second))
	if err != nil || len(m.Voters) != 3 || len(m.NonVoters) != 1 {
		t.Fatalf("membership %+v, %v", m, err)
	}

	staged := nodes[3] // a non-voter restarts from its own Raft state
	staged.stop()
	mustPropose(t, n1.store, createTopic("while-staged-down", 3))
	staged = startNode(t, staged.id, staged.addr, staged.dir, StoreConfig{NonVoter: true})
	waitFor(t, 20*time.Second, "the restarted non-voter to catch up", func() bool {
		_, ok, _ := staged.store.Topic("while-staged-down")
		return ok
	})
}

// admitRetrying asks until an answer comes, as a joiner's loop does every
// 2 s: an answer lost to a leadership change or a timeout is asked again
// (admission is idempotent).
func admitRetrying(t *testing.T, a *membership.Admitter, j membership.Join) membership.Status {
	t.Helper()
	var got membership.Status
	waitFor(t, 30*time.Second, "admission of "+j.NodeID, func() bool {
		var err error
		got, err = a.Admit(ctxFor(t, 10*time.Second), j)
		return err == nil
	})
	return got
}

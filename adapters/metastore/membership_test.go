package metastore

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain/meta"
)

// Ensure that the admission use case grows a real single-node cluster the
// way processes join (internals §9.3, §9.6): each joiner starts its replica
// join-only before anyone admitted it and reads as not admitted; the leader
// stages it; once it registered its member record, asking again promotes
// it while voters < 3 and defers the fourth node. The promoted replicas are
// real voters (they elect a leader once the first node is gone) and the
// staged one follows.
func TestAdmitterGrowsARealCluster(t *testing.T) {
	nodes := growCluster(t)
	n1 := nodes[0]
	mustPropose(t, nodes[3].store, createTopic("after-growth", 2)) // proposed on the non-voter
	sameViews(t, nodes...)
	m, err := n1.store.Membership(ctxFor(t, 10*time.Second))
	if err != nil || len(m.Voters) != 3 || len(m.NonVoters) != 1 {
		t.Fatalf("membership %+v, %v", m, err)
	}
	n1.stop() // the two promoted voters, and nothing else, can elect now
	next := leaderOf(t, nodes[1], nodes[2])
	mustPropose(t, next.store, createTopic("after-n1", 3))
	waitFor(t, 20*time.Second, "the non-voter to follow the new leader", func() bool {
		_, ok, _ := nodes[3].store.Topic("after-n1")
		return ok
	})
}

// Ensure that joined replicas restart from their own Raft state with the
// configuration a process passes (no role in it): a staged non-voter (its
// log replays its staging) and a promoted voter (its role was recorded
// after a snapshot) both come back and follow, and the promoted one still
// votes.
func TestJoinedReplicasRestart(t *testing.T) {
	nodes := growCluster(t)
	for _, n := range nodes[1:] {
		waitFor(t, 20*time.Second, n.id+"'s role to settle", func() bool {
			role, err := readRole(n.host.rolePath())
			want := roleVoter
			if n == nodes[3] {
				want = roleNonVoter
			}
			return err == nil && role == want
		})
	}
	for i, n := range nodes[1:] {
		n.stop()
		mustPropose(t, nodes[0].store, createTopic(fmt.Sprintf("while-%s-down", n.id), 10+i))
		back := startNode(t, n.id, n.addr, n.dir, StoreConfig{})
		if !back.store.Admitted() || back.store.JoinOnly() {
			t.Fatalf("restarted %s reads as a joiner", n.id)
		}
		waitFor(t, 20*time.Second, "restarted "+n.id+" to catch up", func() bool {
			_, ok, _ := back.store.Topic(fmt.Sprintf("while-%s-down", n.id))
			return ok
		})
		nodes[i+1] = back
	}
	nodes[0].stop()
	next := leaderOf(t, nodes[1], nodes[2])
	mustPropose(t, next.store, createTopic("after-restarts", 20))
}

// growCluster starts n1 alone, then n2..n4 join-only; n2 and n3 are staged
// and promoted, n4 is staged and deferred (three voters).
func growCluster(t *testing.T) []*node {
	t.Helper()
	n1 := startNode(t, "n1", freeAddr(t), t.TempDir(), StoreConfig{})
	leaderOf(t, n1)
	if !n1.store.Admitted() || n1.store.JoinOnly() {
		t.Fatal("a bootstrapped node reads as a joiner")
	}
	mustPropose(t, n1.store, createTopic("before-growth", 1))
	// The leader led for a few milliseconds only; a clock 13 s ahead lets the
	// 12 s tenure rule (tested in application/membership) pass at once.
	admit := membership.NewAdmitter(n1.store, membership.DefaultMaxVoters, membership.WithClock(aheadClock{13 * time.Second}))
	nodes := []*node{n1}
	want := []membership.Status{membership.StatusPromoted, membership.StatusPromoted, membership.StatusDeferred}
	for i, st := range want {
		j := startNode(t, fmt.Sprintf("n%d", i+2), freeAddr(t), t.TempDir(), StoreConfig{Join: true})
		if j.store.Admitted() || !j.store.JoinOnly() {
			t.Fatalf("%s reads as admitted before anyone added it", j.id)
		}
		join := membership.Join{NodeID: j.id, RaftAddr: j.addr}
		if got := admitRetrying(t, admit, join); got.Status != membership.StatusStaged {
			t.Fatalf("first join of %s: %+v", j.id, got)
		}
		waitFor(t, 20*time.Second, j.id+" to be admitted and catch up", func() bool {
			_, ok, _ := j.store.Topic("before-growth")
			return j.store.Admitted() && ok
		})
		mustPropose(t, j.store, meta.Envelope{AtMs: 1, Event: &meta.MemberJoin{ID: j.id, Addr: "127.0.0.1:1", ClusterAddr: j.addr}})
		if got := admitRetrying(t, admit, join); got.Status != st {
			t.Fatalf("second join of %s: %+v, want %q", j.id, got, st)
		}
		nodes = append(nodes, j)
	}
	return nodes
}

// admitRetrying asks until an answer comes, as a joiner's loop does every
// 2 s: an answer lost to a leadership change or a timeout is asked again
// (admission is idempotent).
func admitRetrying(t *testing.T, a *membership.Admitter, j membership.Join) membership.Decision {
	t.Helper()
	var got membership.Decision
	waitFor(t, 30*time.Second, "admission of "+j.NodeID, func() bool {
		var err error
		got, err = a.Admit(ctxFor(t, 10*time.Second), j)
		return err == nil
	})
	return got
}

// aheadClock reads the wall clock plus a fixed lead.
type aheadClock struct{ lead time.Duration }

func (c aheadClock) Now() time.Time { return time.Now().Add(c.lead) }

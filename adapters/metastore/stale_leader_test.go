package metastore

import (
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
)

// applyGate holds a state machine's Update while closed.
type applyGate struct {
	mu      sync.Mutex
	release chan struct{} // nil while open
}

func (g *applyGate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.release = make(chan struct{})
}

func (g *applyGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.release != nil {
		close(g.release)
		g.release = nil
	}
}

func (g *applyGate) wait() {
	g.mu.Lock()
	ch := g.release
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// Story F4, on dragonboat: leadership proves the log, not the state
// machine. Node n3 is made leader, then its apply is held while a follower
// commits a topic create through it. n3 leads, yet its local view lacks the
// topic: a destructive decision read from that view would delete live data.
// The leader-confirmation helper must keep the data while n3's barrier
// cannot pass, and answer "present" once n3's state machine caught up.
//
// (Dragonboat itself refuses to campaign while committed > applied, so the
// stale window of an election winner is the one after its first commit:
// exactly this leader-apply lag.)
func TestStaleLeaderMustPassBarrierBeforeDestroying(t *testing.T) {
	gate := &applyGate{}
	members := map[string]string{"n1": freeAddr(t), "n2": freeAddr(t), "n3": freeAddr(t)}
	var nodes []*node
	for _, id := range []string{"n1", "n2", "n3"} {
		cfg := StoreConfig{InitialMembers: members}
		if id == "n3" {
			cfg.beforeApply = gate.wait
		}
		nodes = append(nodes, startNode(t, id, members[id], t.TempDir(), cfg))
	}
	n1, n3 := nodes[0], nodes[2]
	defer gate.open() // never leave dragonboat's apply worker blocked at cleanup

	leader := leaderOf(t, nodes...)
	mustPropose(t, n1.store, createTopic("base", 1))
	sameViews(t, nodes...)
	if leader != n3 {
		if err := leader.host.nh.RequestLeaderTransfer(metadataShardID, n3.store.replicaID); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, "n3 to lead", n3.store.IsLeader)
	}

	gate.hold()
	created := mustPropose(t, n1.store, createTopic("orders", 2)) // n1 applied it; n3 committed it
	if !created.Result.OK() || !n3.store.IsLeader() {
		t.Fatalf("setup: create %+v, n3 leads: %v", created, n3.store.IsLeader())
	}
	if _, ok, _ := n3.store.Topic("orders"); ok {
		t.Fatal("setup: the held state machine shows the topic")
	}
	// What a barrier-less "I am leader, my view is authority" check decides:
	// the topic is absent, so its data could go. The helper must not agree.
	confirm := leaderconfirm.New(n3.store)
	if d := confirm.TopicGone(ctxFor(t, 1500*time.Millisecond), "orders", ""); d.Destroy || d.Err == nil {
		t.Fatalf("lagging leader confirmed destruction (or kept without a barrier failure): %+v", d)
	}

	gate.open()
	d := confirm.TopicGone(ctxFor(t, 10*time.Second), "orders", "")
	if d.Destroy || d.Err != nil || d.Reason != "topic present" {
		t.Fatalf("after catching up: %+v", d)
	}
	mustTopic(t, n3, "orders")
}

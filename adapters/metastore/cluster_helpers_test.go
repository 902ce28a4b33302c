package metastore

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
)

// testRTT keeps elections around 200 ms so cluster tests stay short.
const testRTT = 20 * time.Millisecond

type node struct {
	id, addr, dir string
	host          *Host
	store         *Store
}

func startNode(t *testing.T, id, addr, dir string, cfg StoreConfig) *node {
	t.Helper()
	h, err := NewHost(HostConfig{NodeID: id, RaftAddr: addr, DataDir: dir, RTT: testRTT, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.OpenMetadata(cfg)
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	n := &node{id: id, addr: addr, dir: dir, host: h, store: s}
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() { n.host.Close() }

// startCluster bootstraps n nodes together.
func startCluster(t *testing.T, n int, cfg StoreConfig) []*node {
	t.Helper()
	members := map[string]string{}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
		members[ids[i]] = freeAddr(t)
	}
	cfg.InitialMembers = members
	nodes := make([]*node, n)
	for i, id := range ids {
		nodes[i] = startNode(t, id, members[id], t.TempDir(), cfg)
	}
	return nodes
}

// leaderOf waits until the live nodes agree on a leader and returns it.
func leaderOf(t *testing.T, nodes ...*node) *node {
	t.Helper()
	var leader *node
	waitFor(t, 20*time.Second, "a leader", func() bool {
		for _, n := range nodes {
			if n.store.IsLeader() {
				leader = n
				return true
			}
		}
		return false
	})
	return leader
}

// sameViews passes a barrier on every node and checks their views match.
func sameViews(t *testing.T, nodes ...*node) string {
	t.Helper()
	var want string
	for i, n := range nodes {
		if err := n.store.Barrier(ctxFor(t, 10*time.Second)); err != nil {
			t.Fatalf("%s barrier: %v", n.id, err)
		}
		got, err := n.store.Describe()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = got
		} else if got != want {
			t.Fatalf("%s views differ from %s:\n%s\nwant\n%s", n.id, nodes[0].id, got, want)
		}
	}
	return want
}

func mustTopic(t *testing.T, n *node, name string) meta.Topic {
	t.Helper()
	tp, ok, err := n.store.Topic(name)
	if err != nil || !ok {
		t.Fatalf("%s: topic %q: ok=%v err=%v", n.id, name, ok, err)
	}
	return tp
}

package metastore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.uber.org/zap/zaptest/observer"

	"github.com/narad/narad/domain/meta"
)

// Ensure that three nodes sharing one certificate from one CA form a
// cluster over mutual TLS on loopback (they dial IPs; the certificate names
// only narad-cluster.local) and replicate proposals, and that a joiner is
// brought up by a snapshot streamed over the same transport.
func TestRaftOverMutualTLS(t *testing.T) {
	ca := newTestCA(t, "cluster")
	files := writeTLSFiles(t, ca.clusterCert(t), ca)
	cfg := StoreConfig{SnapshotEntries: 10, CompactionOverhead: 2}
	nodes := startTLSCluster(t, files, cfg)
	leader := leaderOf(t, nodes...)
	for i, n := range nodes {
		mustPropose(t, n.store, createTopic("from-"+n.id, i+1))
	}
	for i := 0; i < 12; i++ {
		mustPropose(t, leader.store, createTopic(fmt.Sprintf("t%02d", i), 10+i))
	}
	sameViews(t, nodes...)
	for _, n := range nodes {
		nhc := n.host.nh.NodeHostConfig()
		if _, ours := nhc.Expert.TransportFactory.(*tlsTransportFactory); !ours || !nhc.MutualTLS {
			t.Fatalf("%s does not run the mutual-TLS transport", n.id)
		}
	}

	for _, n := range nodes { // whoever leads when n4 joins must send a snapshot
		compactLog(t, n)
	}
	mustPropose(t, leader.store, createTopic("tail", 99))
	addr := freeAddr(t)
	if err := leader.store.AddNonVoter(ctxFor(t, 10*time.Second), meta.ReplicaID("n4"), addr); err != nil {
		t.Fatal(err)
	}
	joiner := startTLSNode(t, "n4", addr, t.TempDir(), files, testLogger(),
		StoreConfig{Join: true, NonVoter: true, SnapshotEntries: 10, CompactionOverhead: 2})
	waitFor(t, 20*time.Second, "the joiner to catch up", func() bool {
		_, ok, _ := joiner.store.Topic("tail")
		return ok
	})
	if joiner.store.sm.restores.Load() == 0 {
		t.Fatal("the joiner replayed the log instead of installing a snapshot")
	}
	sameViews(t, append(nodes, joiner)...)
}

// Ensure that a node restarted with a certificate from a CA its peers do
// not trust logs a bad certificate, never catches up and serves none of the
// writes made meanwhile, while the other two keep accepting writes and the
// leader records its link to the node failing (internals §12.3).
func TestRaftTLSUntrustedNodeNeverCatchesUp(t *testing.T) {
	ca, other := newTestCA(t, "cluster"), newTestCA(t, "other")
	files := writeTLSFiles(t, ca.clusterCert(t), ca)
	members := map[string]string{"n1": freeAddr(t), "n2": freeAddr(t), "n3": freeAddr(t)}
	var nodes []*node
	nodeLogs := map[*node]*observer.ObservedLogs{}
	for _, id := range []string{"n1", "n2", "n3"} {
		log, logs := observed()
		n := startTLSNode(t, id, members[id], t.TempDir(), files, log, StoreConfig{InitialMembers: members})
		nodes = append(nodes, n)
		nodeLogs[n] = logs
	}
	leader := leaderOf(t, nodes...)
	mustPropose(t, leader.store, createTopic("before", 1))
	sameViews(t, nodes...)

	var bad *node
	var rest []*node
	for _, n := range nodes {
		if n != leader && bad == nil {
			bad = n
		} else {
			rest = append(rest, n)
		}
	}
	log, logs := observed()
	restartedAt := time.Now()
	bad = restartTLS(t, bad, writeTLSFiles(t, other.clusterCert(t), ca), log) // trusts them, they do not trust it

	mustPropose(t, leader.store, createTopic("while-untrusted", 2))
	waitFor(t, 10*time.Second, "the untrusted node and the leader to log a bad certificate", func() bool {
		return refusedBy(logs, "self") && refusedBy(nodeLogs[leader], "peer")
	})
	waitFor(t, 10*time.Second, "the leader to see its link to the untrusted node fail", func() bool {
		failed, _ := leader.store.RaftLink(bad.addr)
		return failed.After(restartedAt)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*readAttemptTimeout)
	defer cancel()
	if err := bad.store.Barrier(ctx); err == nil {
		t.Fatal("the untrusted node passed a linearizable read")
	}
	if bad.store.CaughtUp() {
		t.Fatal("the untrusted node reports caught up")
	}
	if _, ok, _ := bad.store.Topic("while-untrusted"); ok {
		t.Fatal("the untrusted node received a write")
	}
	for i, n := range rest {
		mustPropose(t, n.store, createTopic(fmt.Sprintf("still-writable-%d", i), 3+i))
		waitCaughtUp(t, n)
	}
	sameViews(t, rest...)
}

// Ensure that a CA rotation in three rolls, each a rolling restart one node
// at a time waiting for the restarted node to catch up, keeps the cluster
// writable after every restart and ends with every node caught up under
// the new CA alone: (1) bundle old + new, (2) certificates from the new CA,
// (3) bundle new only.
func TestRaftTLSCARotation(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old"), newTestCA(t, "new")
	oldCert, newCert := oldCA.clusterCert(t), newCA.clusterCert(t)
	nodes := startTLSCluster(t, writeTLSFiles(t, oldCert, oldCA), StoreConfig{})
	leaderOf(t, nodes...)
	mustPropose(t, nodes[0].store, createTopic("before-rotation", 1))

	rolls := []struct {
		name  string
		files tlsFiles
	}{
		{"bundle old+new", writeTLSFiles(t, oldCert, oldCA, newCA)},
		{"new certificates", writeTLSFiles(t, newCert, oldCA, newCA)},
		{"bundle new only", writeTLSFiles(t, newCert, newCA)},
	}
	topic := 2
	for _, roll := range rolls {
		for i := range nodes {
			nodes[i] = restartTLS(t, nodes[i], roll.files, testLogger())
			waitCaughtUp(t, nodes[i])
			name := fmt.Sprintf("roll-%d-after-%s", topic, nodes[i].id)
			if got := mustPropose(t, nodes[i].store, createTopic(name, topic)); !got.Result.OK() {
				t.Fatalf("%s (%s): %+v", nodes[i].id, roll.name, got)
			}
			topic++
		}
	}
	for _, n := range nodes {
		waitCaughtUp(t, n)
	}
	sameViews(t, nodes...)
}

package produce_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// join registers ids as alive members (a rejoin revives a dead one).
func (e *env) join(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		e.propose(t, &meta.MemberJoin{ID: id, Addr: id + ":8080", ClusterAddr: id + ":9090"})
	}
}

func (e *env) markDead(t *testing.T, id string) {
	t.Helper()
	e.propose(t, &meta.MemberDead{ID: id})
}

// landed lists "key=payload" of every record node committed on partition
// p of topic, in commit order.
func (e *env) landed(node, topic string, p int32) []string {
	var out []string
	for _, c := range e.peers.Commits() {
		if c.Node != node || c.Req.Topic != topic || c.Req.Partition != p {
			continue
		}
		for _, r := range c.Req.Records {
			out = append(out, string(r.Key)+"="+string(r.Payload))
		}
	}
	return out
}

// landedLocally lists "key=payload" of every record of topic's partition p
// committed on this node.
func (e *env) landedLocally(t *testing.T, topic string, id domain.TopicID, p int32) []string {
	t.Helper()
	var out []string
	for _, r := range e.records(t, topic, id, p) {
		out = append(out, string(r.Key)+"="+string(r.Payload))
	}
	return out
}

func wantLanded(t *testing.T, where string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s holds %v, want %v", where, got, want)
	}
}

// Ensure that the records of a partition whose remote owner keeps failing
// stay put, retried once a second, for the 3 s reroute grace measured from
// the first failed attempt; then every record but the probe goes, keyed and
// in order, to the next partition with a live owner; the probe keeps
// trying its own partition and its first success brings traffic back
// (internals.md §3.3 reroute grace, §3.4; §1.7 node down; nothing lost or
// committed twice).
func TestDispatcherReroutesAfterGrace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", "n3", 1)
	e.assign(t, "t", self, 2)
	e.peers.Fail("n2", nil)
	for i := range 6 {
		e.produce(t, "t", "k", fmt.Sprintf("m%d", i), 0)
	}
	t0 := e.clock.Now()
	e.run(t)
	waitFor(t, "the first failed commit", func() bool { return e.peers.Attempts("n2") == 1 }) // launched at t0
	for e.clock.Now().Sub(t0) < 2900*time.Millisecond {
		e.step(t, 100*time.Millisecond)
		if got := e.landed("n3", "t", 1); len(got) != 0 {
			t.Fatalf("rerouted %v after %v, within the grace", got, e.clock.Now().Sub(t0))
		}
	}
	if n := e.peers.Attempts("n2"); n < 2 {
		t.Fatalf("%d attempts in 2.9 s; the probe retries once a second", n)
	}
	waitFor(t, "the reroute to partition 1", func() bool {
		e.step(t, 100*time.Millisecond)
		return len(e.landed("n3", "t", 1)) == 5
	})
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "k=m1", "k=m2", "k=m3", "k=m4", "k=m5")
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d passed the probe", cp)
	}

	e.peers.Heal("n2")
	waitFor(t, "the probe's success", func() bool {
		e.clock.Advance(100 * time.Millisecond)
		return e.wal.Checkpoint() == 6
	})
	e.produce(t, "t", "k", "m6", 0)
	waitFor(t, "traffic back on partition 0", func() bool { return e.wal.Checkpoint() == 7 })
	wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "k=m0", "k=m6")
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "k=m1", "k=m2", "k=m3", "k=m4", "k=m5")
}

// Ensure that the records of a partition whose owner membership marks dead
// go at once, without any commit to it, to the first later partition whose
// owner is alive (skipping a dead one), and return to their partition once
// its owner is alive again (internals.md §3.3, §3.4, §3.5).
func TestDispatcherReroutesAtOnceFromDeadOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", "n3", 1)
	e.assign(t, "t", self, 2)
	e.markDead(t, "n2")
	e.markDead(t, "n3")
	e.produce(t, "t", "a", "m0", 0)
	e.produce(t, "t", "b", "m1", 1)
	e.produce(t, "t", "a", "m2", 0)
	e.run(t)
	waitFor(t, "checkpoint at 3", func() bool { return e.wal.Checkpoint() == 3 })
	wantLanded(t, "local partition 2", e.landedLocally(t, "t", id, 2), "a=m0", "b=m1", "a=m2")
	if n := e.peers.Attempts("n2") + e.peers.Attempts("n3"); n != 0 {
		t.Fatalf("%d commits sent to dead owners", n)
	}

	e.join(t, "n2")
	e.produce(t, "t", "a", "m3", 0)
	waitFor(t, "checkpoint at 4", func() bool { return e.wal.Checkpoint() == 4 })
	wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "a=m3")
}

// Ensure that refusals saying the records belong elsewhere (not the owner,
// another incarnation) never reroute, however long they last: the records
// wait for their own partition and land there once it takes them.
func TestDispatcherNeverReroutesOnOwnerRefusals(t *testing.T) {
	t.Parallel()
	for _, refusal := range []error{domain.ErrNotOwner, domain.ErrTopicNotFound} {
		t.Run(refusal.Error(), func(t *testing.T) {
			e := newEnv(t)
			e.createTopic(t, "t", 1, 2)
			e.join(t, "n2", "n3")
			e.assign(t, "t", "n2", 0)
			e.assign(t, "t", "n3", 1)
			e.peers.Fail("n2", fmt.Errorf("peer n2: %w", refusal))
			e.produce(t, "t", "", "m0", 0)
			e.produce(t, "t", "", "m1", 0)
			t0 := e.clock.Now()
			e.run(t)
			waitFor(t, "5 s of refusals", func() bool {
				e.clock.Advance(100 * time.Millisecond)
				return e.clock.Now().Sub(t0) >= 5*time.Second && e.peers.Attempts("n2") >= 5
			})
			if got := e.landed("n3", "t", 1); len(got) != 0 || e.wal.Checkpoint() != 0 {
				t.Fatalf("rerouted on %v: %v, checkpoint %d", refusal, got, e.wal.Checkpoint())
			}
			e.peers.Heal("n2")
			waitFor(t, "checkpoint at 2", func() bool {
				e.clock.Advance(100 * time.Millisecond)
				return e.wal.Checkpoint() == 2
			})
			wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "=m0", "=m1")
		})
	}
}

// Ensure that with no sibling to take them (every owner dead) the records
// stay in the WAL, nothing is sent to a dead owner, and they land once an
// owner is alive again (G5: every failure keeps the data).
func TestDispatcherKeepsRecordsWithoutSibling(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 2)
	uid := e.createTopic(t, "u", 2, 1)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", "n3", 1)
	e.assign(t, "u", self)
	e.markDead(t, "n2")
	e.markDead(t, "n3")
	e.produce(t, "t", "", "m0", 0)
	e.produce(t, "t", "", "m1", 1)
	e.produce(t, "u", "", "later", 0)
	e.run(t)
	waitFor(t, "the later local record", func() bool { return len(e.records(t, "u", uid, 0)) == 1 })
	e.clock.Advance(2 * time.Second) // a rescan or two find no sibling either
	if n := e.peers.Attempts("n2") + e.peers.Attempts("n3"); n != 0 || e.wal.Checkpoint() != 0 {
		t.Fatalf("%d commits to dead owners, checkpoint %d", n, e.wal.Checkpoint())
	}
	e.join(t, "n3")
	waitFor(t, "checkpoint at 3", func() bool {
		e.clock.Advance(100 * time.Millisecond)
		return e.wal.Checkpoint() == 3
	})
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "=m0", "=m1")
}

// nodeBlockingPeers holds commits to one node until released.
type nodeBlockingPeers struct {
	ports.PeerCommitter
	node    string
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *nodeBlockingPeers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	if node == b.node {
		b.once.Do(func() { close(b.entered) })
		select {
		case <-b.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return b.PeerCommitter.CommitBatch(ctx, node, req)
}

func (b *nodeBlockingPeers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	return commitEach(ctx, node, reqs, b.CommitBatch)
}

// Ensure that a commit already in flight when its owner is marked dead is
// never duplicated onto a sibling: the records behind it reroute, it lands
// once on its own partition (internals.md §3.4).
func TestDispatcherRerouteNeverDuplicatesACommitInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 2)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", "n3", 1)
	peers := &nodeBlockingPeers{PeerCommitter: e.peers, node: "n2", entered: make(chan struct{}), release: make(chan struct{})}
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: e.wal, Store: e.store, Latch: e.latch, Confirmer: leaderconfirm.New(e.store),
		Local: e.committer, Peers: peers, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Self: self,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.produce(t, "t", "", "m0", 0)
	<-peers.entered
	e.markDead(t, "n2")
	e.produce(t, "t", "", "m1", 0)
	e.produce(t, "t", "", "m2", 0)
	waitFor(t, "the reroute behind the commit in flight", func() bool { return len(e.landed("n3", "t", 1)) == 2 })
	close(peers.release)
	waitFor(t, "checkpoint at 3", func() bool { return e.wal.Checkpoint() == 3 })
	wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "=m0")
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "=m1", "=m2")
}

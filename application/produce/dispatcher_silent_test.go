package produce_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// silentPeers is, through the peer port, an owner cut off the network
// (issue 15): while a node is cut, a commit to it hangs, neither landing
// nor failing, until the transport notices the silence (detect), which
// fails the calls waiting as no answer (outcome unknown) and every later
// one at once as not sent, until heal. Other nodes commit as e.peers does.
type silentPeers struct {
	ports.PeerCommitter
	mu       sync.Mutex
	cut      map[string]chan struct{} // closed by detect
	detected map[string]bool
	hung     atomic.Int64 // calls that entered a cut node's hang
	refused  atomic.Int64 // calls refused at once after detection
}

func newSilentPeers(inner ports.PeerCommitter) *silentPeers {
	return &silentPeers{PeerCommitter: inner, cut: map[string]chan struct{}{}, detected: map[string]bool{}}
}

func (s *silentPeers) silence(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cut[node] = make(chan struct{})
}

func (s *silentPeers) detect(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.cut[node])
	s.detected[node] = true
}

func (s *silentPeers) heal(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cut, node)
	delete(s.detected, node)
}

func (s *silentPeers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	s.mu.Lock()
	gone, cut := s.cut[node]
	detected := s.detected[node]
	s.mu.Unlock()
	switch {
	case cut && detected:
		s.refused.Add(1)
		return 0, fmt.Errorf("silent %s: dial: %w", node, domain.ErrNotSent)
	case cut:
		s.hung.Add(1)
		select {
		case <-gone:
			return 0, fmt.Errorf("silent %s: connection closed: %w", node, domain.ErrNoAnswer)
		case <-ctx.Done():
			return 0, fmt.Errorf("silent %s: %w: %w", node, domain.ErrNoAnswer, ctx.Err())
		}
	}
	return s.PeerCommitter.CommitBatch(ctx, node, req)
}

func (s *silentPeers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	return commitEach(ctx, node, reqs, s.CommitBatch)
}

// runWith starts a dispatcher over e's fakes committing remotely through
// peers; e.step drives it. Stopped at cleanup.
func (e *env) runWith(t *testing.T, peers ports.PeerCommitter) {
	t.Helper()
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: e.turns, Store: e.store, Latch: e.latch, Confirmer: leaderconfirm.New(e.store),
		Local: e.committer, Peers: peers, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Self: self,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// Ensure that an owner gone silent (its commit neither lands nor fails)
// holds its partition's records only for the reroute grace counted from
// the start of the hung commit: the records behind it then go, in order,
// to the next partition with a live owner, while the commit in flight is
// never duplicated; once the transport fails that commit (no answer), its
// first record stays as the probe on its own partition, retried once a
// second, and the first success brings traffic back. Nothing is lost and
// nothing committed twice (internals.md §1.1, §3.3, §3.4; issue 15).
func TestDispatcherReroutesAroundSilentOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", "n3", 1)
	e.assign(t, "t", self, 2)
	peers := newSilentPeers(e.peers)
	peers.silence("n2")
	e.produce(t, "t", "k", "m0", 0)
	t0 := e.clock.Now()
	e.runWith(t, peers)
	waitFor(t, "the commit to the silent owner", func() bool { return peers.hung.Load() == 1 })
	for i := 1; i <= 4; i++ {
		e.produce(t, "t", "k", fmt.Sprintf("m%d", i), 0)
	}
	for e.clock.Now().Sub(t0) < 2900*time.Millisecond {
		e.step(t, 100*time.Millisecond)
		if got := e.landed("n3", "t", 1); len(got) != 0 {
			t.Fatalf("rerouted %v after %v, within the grace", got, e.clock.Now().Sub(t0))
		}
	}
	waitFor(t, "the reroute behind the hung commit", func() bool {
		e.step(t, 100*time.Millisecond)
		return len(e.landed("n3", "t", 1)) == 4
	})
	if took := e.clock.Now().Sub(t0); took > 3200*time.Millisecond {
		t.Fatalf("rerouted %v after the hung commit started, want the 3 s grace and a pass", took)
	}
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "k=m1", "k=m2", "k=m3", "k=m4")
	if n := peers.hung.Load(); n != 1 {
		t.Fatalf("%d commits sent to the silent owner, want only the one in flight", n)
	}

	peers.detect("n2") // the transport gives up on the silent connection
	e.produce(t, "t", "k", "m5", 0)
	waitFor(t, "the next record rerouted and the probe retried", func() bool {
		e.step(t, 100*time.Millisecond)
		return len(e.landed("n3", "t", 1)) == 5 && peers.refused.Load() >= 2
	})
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d passed the probe (m0), whose outcome is unknown", cp)
	}
	peers.heal("n2")
	waitFor(t, "the probe's success", func() bool {
		e.step(t, 100*time.Millisecond)
		return e.wal.Checkpoint() == 6
	})
	e.produce(t, "t", "k", "m6", 0)
	waitFor(t, "traffic back on partition 0", func() bool { return e.wal.Checkpoint() == 7 })
	wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "k=m0", "k=m6")
	wantLanded(t, "n3 partition 1", e.landed("n3", "t", 1), "k=m1", "k=m2", "k=m3", "k=m4", "k=m5")
}

// Ensure that a silent owner's other partitions are no sibling: the records
// of its hung partition skip the next partition (same owner, no commit of
// its own yet) for the one after, owned by a healthy node, and keep doing
// so once the owner's commits fail on the transport instead of hanging
// (internals.md §3.4: the owner alive and healthy).
func TestDispatcherSiblingSkipsSilentOwnersPartitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.join(t, "n2", "n3")
	e.assign(t, "t", "n2", 0, 1)
	e.assign(t, "t", "n3", 2)
	peers := newSilentPeers(e.peers)
	peers.silence("n2")
	e.produce(t, "t", "", "a0", 0)
	t0 := e.clock.Now()
	e.runWith(t, peers)
	waitFor(t, "the commit to the silent owner", func() bool { return peers.hung.Load() == 1 })
	e.produce(t, "t", "", "a1", 0)
	e.produce(t, "t", "", "a2", 0)
	waitFor(t, "the reroute past the silent owner's partition", func() bool {
		e.step(t, 100*time.Millisecond)
		return len(e.landed("n3", "t", 2)) == 2
	})
	if took := e.clock.Now().Sub(t0); took > 3200*time.Millisecond {
		t.Fatalf("rerouted %v after the hung commit started", took)
	}
	peers.detect("n2")
	e.produce(t, "t", "", "a3", 0)
	waitFor(t, "the next record past the failing owner, and the probe retried", func() bool {
		e.step(t, 100*time.Millisecond)
		return len(e.landed("n3", "t", 2)) == 3 && peers.refused.Load() >= 1
	})
	if got := e.landed("n2", "t", 1); got != nil {
		t.Fatalf("n2 partition 1 holds %v", got)
	}
	wantLanded(t, "n3 partition 2", e.landed("n3", "t", 2), "=a1", "=a2", "=a3")
	peers.heal("n2")
	waitFor(t, "checkpoint at 4", func() bool {
		e.step(t, 100*time.Millisecond)
		return e.wal.Checkpoint() == 4
	})
	wantLanded(t, "n2 partition 0", e.landed("n2", "t", 0), "=a0")
}

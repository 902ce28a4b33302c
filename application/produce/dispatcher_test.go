package produce_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Ensure that every accepted record reaches its partition exactly once, in
// WAL order per partition at dense offsets, and that the checkpoint passes
// all of them and is stored at shutdown (conformance 95, 98).
func TestDispatcherCommitsEveryRecordOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	stop := e.run(t)
	const n = 300
	for i := range n {
		e.produce(t, "t", fmt.Sprintf("k%d", i%7), fmt.Sprintf("m%03d", i))
	}
	waitFor(t, "checkpoint at 300", func() bool { return e.wal.Checkpoint() == n })
	stop()
	e.wantWALOrder(t, "t", id, 3)
	total := 0
	for p := range int32(3) {
		total += e.metrics.Count(fmt.Sprintf("produced t/%d", p))
	}
	if total != n {
		t.Fatalf("produced counted %d, want %d", total, n)
	}
}

// Ensure that a batch produce pinned to one partition lands at offsets 0, 1
// and 2 in batch order (conformance 192).
func TestDispatcherKeepsBatchOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	e.run(t)
	if err := e.svc.AcceptBatch(context.Background(), "t", []produce.Message{msg("", "a", 0), msg("", "b", 0), msg("", "c", 0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "checkpoint at 3", func() bool { return e.wal.Checkpoint() == 3 })
	recs := e.records(t, "t", id, 0)
	if len(recs) != 3 || string(recs[0].Payload) != "a" || string(recs[1].Payload) != "b" || string(recs[2].Payload) != "c" {
		t.Fatalf("partition 0 holds %+v", recs)
	}
}

// Ensure that a failed commit keeps its records (nothing committed, the
// checkpoint held) and retries them after the backoff, each landing once.
func TestDispatcherRetriesFailedCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	e.logs.FailNextCommit(nil)
	for i := range 5 {
		e.produce(t, "t", "", fmt.Sprintf("m%d", i), 1)
	}
	e.run(t)
	waitFor(t, "a failed commit", func() bool { return e.committer.failures() == 1 })
	if got := e.records(t, "t", id, 1); len(got) != 0 || e.wal.Checkpoint() != 0 {
		t.Fatalf("after a failed commit: %d records, checkpoint %d", len(got), e.wal.Checkpoint())
	}
	waitFor(t, "checkpoint at 5", func() bool {
		e.clock.Advance(100 * time.Millisecond) // the failing destination retries after 1 s
		return e.wal.Checkpoint() == 5
	})
	recs := e.records(t, "t", id, 1)
	if len(recs) != 5 {
		t.Fatalf("partition holds %d records after the retry, want 5", len(recs))
	}
	for i, r := range recs {
		if string(r.Payload) != fmt.Sprintf("m%d", i) {
			t.Fatalf("offset %d = %q", i, r.Payload)
		}
	}
}

// Ensure that an unassigned partition keeps its records until assigned,
// while later records of an assigned partition commit past them: the
// checkpoint stays at the first pending sequence.
func TestDispatcherKeepsUnassignedPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self, 0)
	e.produce(t, "t", "", "waits", 1)
	e.produce(t, "t", "", "goes-1", 0)
	e.produce(t, "t", "", "goes-2", 0)
	e.run(t)
	waitFor(t, "partition 0 committed", func() bool { return len(e.records(t, "t", id, 0)) == 2 })
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d passed an unassigned partition's record", cp)
	}
	e.assign(t, "t", self, 1)
	waitFor(t, "checkpoint at 3", func() bool {
		e.clock.Advance(10 * time.Millisecond) // the unassigned partition is looked up again every 10 ms
		return e.wal.Checkpoint() == 3
	})
	if recs := e.records(t, "t", id, 1); len(recs) != 1 || string(recs[0].Payload) != "waits" {
		t.Fatalf("partition 1 holds %+v", recs)
	}
}

// Ensure that a partition owned by another node is committed through the
// peer port with its incarnation, and that a peer failure keeps the
// records for a retry.
func TestDispatcherRemoteOwner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", "n2")
	e.peers.FailNext(nil)
	e.produce(t, "t", "", "remote", 2)
	e.run(t)
	waitFor(t, "checkpoint past the failure", func() bool {
		e.clock.Advance(100 * time.Millisecond)
		return e.wal.Checkpoint() == 1
	})
	commits := e.peers.Commits()
	if len(commits) != 1 {
		t.Fatalf("peer got %d commits, want 1", len(commits))
	}
	c := commits[0]
	if c.Node != "n2" || c.Req.Topic != "t" || c.Req.TopicID != id || c.Req.Partition != 2 || string(c.Req.Records[0].Payload) != "remote" {
		t.Fatalf("peer commit %+v", c)
	}
	if len(e.committer.snapshot()) != 0 {
		t.Fatal("a remote partition went through the local committer")
	}
}

// Ensure that big records reach a remote owner in commits of at most 8 MiB
// of encoded records, each record once and in order (story F20).
func TestDispatcherRemoteByteBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", "n2")
	payload := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 64 {
		payload[0] = byte(i)
		e.produce(t, "t", "", string(payload), 0)
	}
	e.run(t)
	waitFor(t, "checkpoint at 64", func() bool { return e.wal.Checkpoint() == 64 })
	next := 0
	for _, c := range e.peers.Commits() {
		size := 0
		for _, r := range c.Req.Records {
			size += len(r.Key) + len(r.Payload)
			if int(r.Payload[0]) != next {
				t.Fatalf("record %d arrived in place of %d", r.Payload[0], next)
			}
			next++
		}
		if size > 8<<20 {
			t.Fatalf("a commit carried %d bytes", size)
		}
	}
	if next != 64 {
		t.Fatalf("peer got %d records, want 64", next)
	}
}

// Ensure that after a delete and a recreate under the same name the new
// incarnation never receives the old one's records: they are discarded
// once the leader confirms, and the new records land from offset 0 (stories
// F21, F30; conformance 65).
func TestDispatcherDeleteRecreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	for i := range 5 {
		e.produce(t, "t", "", fmt.Sprintf("old-%d", i), 0)
	}
	e.deleteTopic(t, "t", old)
	fresh := e.createTopic(t, "t", 2, 3)
	e.assign(t, "t", self)
	for i := range 3 {
		e.produce(t, "t", "", fmt.Sprintf("new-%d", i), 0)
	}
	e.run(t)
	waitFor(t, "checkpoint at 8", func() bool { return e.wal.Checkpoint() == 8 })
	recs := e.records(t, "t", fresh, 0)
	if len(recs) != 3 {
		t.Fatalf("new incarnation holds %d records, want 3", len(recs))
	}
	for i, r := range recs {
		if r.Offset != int64(i) || string(r.Payload) != fmt.Sprintf("new-%d", i) {
			t.Fatalf("offset %d = %+v", i, r)
		}
	}
	for _, c := range e.committer.snapshot() {
		if c.req.TopicID == old && c.err == nil {
			t.Fatalf("the old incarnation committed %+v", c.req)
		}
	}
}

// Ensure that a record whose topic is absent locally is kept while the
// leader cannot confirm (barrier failing, replica not caught up) and
// discarded only once it confirms (story F3).
func TestDispatcherDiscardNeedsLeader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ghost := domain.IngressRecord{Topic: "ghost", TopicID: domain.TopicID(topicID(9)), Payload: []byte("x"), CreatedAtMs: 1}
	if _, err := e.wal.Append(context.Background(), ghost); err != nil {
		t.Fatal(err)
	}
	e.store.FailBarrier(meta.ErrUnavailable)
	if !e.latch.Ready(context.Background()) { // the latch's own barrier fails too: set it first
		e.store.FailBarrier(nil)
		e.latch.Ready(context.Background())
		e.store.FailBarrier(meta.ErrUnavailable)
	}
	before := e.store.barriers.Load()
	e.run(t)
	waitFor(t, "two failed confirmations", func() bool {
		e.clock.Advance(time.Second)
		return e.store.barriers.Load() >= before+2
	})
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("discarded without the leader: checkpoint %d", cp)
	}
	e.store.FailBarrier(nil)
	e.store.SetCaughtUp(false)
	asked := e.store.caughtUp.Load()
	waitFor(t, "confirmations while not caught up", func() bool {
		e.clock.Advance(time.Second)
		return e.store.caughtUp.Load() >= asked+2
	})
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("discarded while not caught up: checkpoint %d", cp)
	}
	e.store.SetCaughtUp(true)
	waitFor(t, "the confirmed discard", func() bool {
		e.clock.Advance(time.Second)
		return e.wal.Checkpoint() == 1
	})
}

// Ensure that records of a topic the lagging replica has not applied yet
// are kept (the leader's view has it) and delivered once the replica
// catches up.
func TestDispatcherKeepsRecordsOfLaggingReplica(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.latch.Ready(context.Background())
	rec := domain.IngressRecord{Topic: "late", TopicID: domain.TopicID(topicID(5)), Payload: []byte("kept"), CreatedAtMs: 1}
	if _, err := e.wal.Append(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	e.store.HoldApply()
	if _, err := e.store.Commit(meta.Envelope{AtMs: 1, Event: &meta.CreateTopic{Name: "late", ID: topicID(5), Partitions: 3, VisibilityTimeoutMs: 30_000}}); err != nil {
		t.Fatal(err)
	}
	e.run(t)
	asked := e.store.caughtUp.Load()
	waitFor(t, "confirmations on the lagging replica", func() bool {
		e.clock.Advance(time.Second)
		return e.store.caughtUp.Load() >= asked+2
	})
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("discarded on a lagging replica: checkpoint %d", cp)
	}
	if err := e.store.ReleaseApply(); err != nil {
		t.Fatal(err)
	}
	e.assign(t, "late", self)
	waitFor(t, "the record committed", func() bool {
		e.clock.Advance(time.Second)
		return e.wal.Checkpoint() == 1
	})
	if recs := e.records(t, "late", rec.TopicID, 0); len(recs) != 1 || string(recs[0].Payload) != "kept" {
		t.Fatalf("partition holds %+v", recs)
	}
}

// Ensure that nothing is dispatched before the ownership latch is set (G11).
func TestDispatcherWaitsForLatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	e.produce(t, "t", "", "x", 0)
	e.store.SetCaughtUp(false)
	e.run(t)
	waitFor(t, "latch checks", func() bool { return e.store.caughtUp.Load() >= 5 })
	if len(e.committer.snapshot()) != 0 || len(e.records(t, "t", id, 0)) != 0 {
		t.Fatal("dispatched before the ownership latch was set")
	}
	e.store.SetCaughtUp(true)
	waitFor(t, "checkpoint at 1", func() bool { return e.wal.Checkpoint() == 1 })
}

// Ensure that a restarted dispatcher resumes at the stored checkpoint: what
// the first one committed is not committed again.
func TestDispatcherResumesAtCheckpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	e.produce(t, "t", "", "first", 0)
	stop := e.run(t)
	waitFor(t, "checkpoint at 1", func() bool { return e.wal.Checkpoint() == 1 })
	stop()
	e.produce(t, "t", "", "second", 0)
	e.run(t)
	waitFor(t, "checkpoint at 2", func() bool { return e.wal.Checkpoint() == 2 })
	if recs := e.records(t, "t", id, 0); len(recs) != 2 || string(recs[1].Payload) != "second" {
		t.Fatalf("partition holds %+v", recs)
	}
}

// blockingPeers holds every commit to a node until released.
type blockingPeers struct {
	*fake.PeerCommitter
	release chan struct{}
	entered chan struct{}
}

func (b *blockingPeers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return b.PeerCommitter.CommitBatch(ctx, node, req)
}

func (b *blockingPeers) CommitBatches(ctx context.Context, node string, reqs []ports.CommitRequest) []ports.CommitOutcome {
	return commitEach(ctx, node, reqs, b.CommitBatch)
}

// Ensure that a hung commit to one owner does not hold up other partitions,
// and that the records queued behind it land, in order, once it returns.
func TestDispatcherHungCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", "n2", 0)
	e.assign(t, "t", self, 1)
	peers := &blockingPeers{PeerCommitter: e.peers, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: e.wal, Store: e.store, Latch: e.latch, Confirmer: leaderconfirm.New(e.store),
		Local: e.committer, Peers: peers, Clock: e.clock, Log: slog.New(slog.DiscardHandler), Self: self,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.produce(t, "t", "", "remote-0", 0)
	<-peers.entered
	for i := 1; i < 4; i++ {
		e.produce(t, "t", "", fmt.Sprintf("remote-%d", i), 0)
	}
	e.clock.Advance(2 * time.Second) // the remote commit is now hung
	e.produce(t, "t", "", "local", 1)
	waitFor(t, "the local partition committed", func() bool { return len(e.records(t, "t", id, 1)) == 1 })
	if cp := e.wal.Checkpoint(); cp != 0 {
		t.Fatalf("checkpoint %d passed a hung commit", cp)
	}
	close(peers.release)
	waitFor(t, "checkpoint at 5", func() bool { return e.wal.Checkpoint() == 5 })
	var got []string
	for _, c := range e.peers.Commits() {
		for _, r := range c.Req.Records {
			got = append(got, string(r.Payload))
		}
	}
	if fmt.Sprint(got) != "[remote-0 remote-1 remote-2 remote-3]" {
		t.Fatalf("remote partition got %v", got)
	}
}

// Ensure that an owner answering "no such incarnation" while the local
// replica shows it live keeps the records: they go back to the WAL, are
// re-checked and committed on a later try, never discarded.
func TestDispatcherPeerIncarnationRefusalKeeps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", "n2")
	e.peers.FailNext(fmt.Errorf("peer n2: %w", domain.ErrTopicNotFound))
	e.produce(t, "t", "", "kept", 0)
	e.run(t)
	waitFor(t, "checkpoint at 1", func() bool {
		e.clock.Advance(100 * time.Millisecond)
		return e.wal.Checkpoint() == 1
	})
	if c := e.peers.Commits(); len(c) != 1 || string(c[0].Req.Records[0].Payload) != "kept" {
		t.Fatalf("peer commits %+v", c)
	}
}

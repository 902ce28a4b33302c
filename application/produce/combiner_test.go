package produce_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// gatedLogs holds its first CommitDurable until release is closed and
// records the size of every run it commits.
type gatedLogs struct {
	ports.PartitionWriter
	entered, release chan struct{}
	once             sync.Once

	mu   sync.Mutex
	runs []int
	// failRun, when set, is returned by the commit of run number failAt
	// (0-based) instead of committing.
	failRun error
	failAt  int
}

func newGatedLogs(w ports.PartitionWriter) *gatedLogs {
	return &gatedLogs{PartitionWriter: w, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedLogs) CommitDurable(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (int64, error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.release
	}
	g.mu.Lock()
	g.runs = append(g.runs, len(recs))
	fail := g.failRun != nil && len(g.runs)-1 == g.failAt
	g.mu.Unlock()
	if fail {
		return 0, g.failRun
	}
	return g.PartitionWriter.CommitDurable(ctx, ref, recs)
}

func (g *gatedLogs) commits() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.runs...)
}

// gatedCommitter is a Committer over env's store whose log holds the first
// commit.
func (e *env) gatedCommitter() (*produce.Committer, *gatedLogs) {
	g := newGatedLogs(e.logs)
	return produce.NewCommitter(produce.CommitterDeps{Store: e.store, Logs: g, Latch: e.latch, Clock: e.clock, Metrics: e.metrics, Self: self}), g
}

type commitOutcome struct {
	first int64
	err   error
}

// Ensure that batches reaching one partition while a commit runs are
// appended together with one CommitDurable (one fsync), each at its own
// contiguous offsets, and that a batch whose caller gave up meanwhile is
// left out (internals.md §3.8).
func TestCommitterCombinesConcurrentBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	c, g := e.gatedCommitter()

	lead := make(chan commitOutcome, 1)
	go func() {
		first, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, "a"))
		lead <- commitOutcome{first, err}
	}()
	<-g.entered
	gone, cancel := context.WithCancel(context.Background())
	outs := make([]chan commitOutcome, 3)
	ctxs := []context.Context{context.Background(), gone, context.Background()}
	payloads := [][]string{{"b1", "b2"}, {"x"}, {"c1", "c2", "c3"}}
	for i := range outs {
		outs[i] = make(chan commitOutcome, 1)
		go func() {
			first, err := c.CommitBatch(ctxs[i], commitReq("t", id, 0, payloads[i]...))
			outs[i] <- commitOutcome{first, err}
		}()
		waitFor(t, "the batch queued", func() bool { return c.QueuedBatches(domain.PartitionRef{Topic: "t", TopicID: id}) == i+1 })
	}
	cancel()
	close(g.release)

	if o := <-lead; o.err != nil || o.first != 0 {
		t.Fatalf("leading batch: %+v", o)
	}
	want := []commitOutcome{{1, nil}, {0, context.Canceled}, {3, nil}}
	for i, ch := range outs {
		o := <-ch
		if o.first != want[i].first || !errors.Is(o.err, want[i].err) || (want[i].err == nil) != (o.err == nil) {
			t.Fatalf("batch %d: %+v, want %+v", i, o, want[i])
		}
	}
	if runs := g.commits(); len(runs) != 2 || runs[0] != 1 || runs[1] != 5 {
		t.Fatalf("commit runs %v, want [1 5]: the queued batches share one commit", runs)
	}
	got := e.records(t, "t", id, 0)
	var payloadsGot []string
	for _, r := range got {
		payloadsGot = append(payloadsGot, string(r.Payload))
	}
	if len(got) != 6 || payloadsGot[1] != "b1" || payloadsGot[3] != "c1" {
		t.Fatalf("log holds %v; the cancelled batch must be left out", payloadsGot)
	}
}

// Ensure that a failed combined commit answers every batch of the run with
// the same error and leaves nothing behind, so each caller's retry lands.
func TestCommitterCombinedFailureIsShared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	c, g := e.gatedCommitter()
	g.failRun, g.failAt = errDiskRefused, 1
	lead := make(chan error, 1)
	go func() {
		_, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, "a"))
		lead <- err
	}()
	<-g.entered
	outs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, "q"))
			outs <- err
		}()
		waitFor(t, "the batch queued", func() bool { return c.QueuedBatches(domain.PartitionRef{Topic: "t", TopicID: id}) == i+1 })
	}
	close(g.release)
	if err := <-lead; err != nil {
		t.Fatalf("leading batch: %v", err)
	}
	for range 2 {
		if err := <-outs; !errors.Is(err, errDiskRefused) {
			t.Fatalf("queued batch: %v, want the run's error", err)
		}
	}
	if runs := g.commits(); len(runs) != 2 || runs[1] != 2 {
		t.Fatalf("runs %v", runs)
	}
	if got := e.records(t, "t", id, 0); len(got) != 1 {
		t.Fatalf("log holds %d records, want the lead's only", len(got))
	}
}

var errDiskRefused = errors.New("disk refused")

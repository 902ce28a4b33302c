package produce_test

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// gatherEnv is a gated Committer over a one-partition local topic t whose
// combiner gathers for gatherMax.
func gatherEnv(t *testing.T, gatherMax time.Duration) (*env, *produce.Committer, *gatedLogs, domain.TopicID) {
	t.Helper()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	c, g := e.gatedCommitter()
	c.SetGatherMax(gatherMax)
	return e, c, g, id
}

// combinedOnce makes c's next cycle on t/0 combine two batches (a held
// first commit with two batches queued behind it), the history that makes
// the cycle after it gather.
func combinedOnce(t *testing.T, c *produce.Committer, g *gatedLogs, id domain.TopicID) {
	t.Helper()
	ref := domain.PartitionRef{Topic: "t", TopicID: id}
	done := make(chan error, 3)
	go func() {
		_, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, "lead"))
		done <- err
	}()
	<-g.entered
	for i := range 2 {
		go func() {
			_, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, "q"))
			done <- err
		}()
		waitFor(t, "the batch queued", func() bool { return c.QueuedBatches(ref) == i+1 })
	}
	close(g.release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// commitAsync commits payload to t/0 on its own goroutine.
func commitAsync(c *produce.Committer, id domain.TopicID, payload string) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := c.CommitBatch(context.Background(), commitReq("t", id, 0, payload))
		out <- err
	}()
	return out
}

// Ensure that after a cycle that combined two callers' batches, the next
// cycle's leader waits for another batch and commits both with one
// CommitDurable (one fsync for batches sent at the same busy boundary).
func TestCombinerGathersAfterACombinedCycle(t *testing.T) {
	t.Parallel()
	_, c, g, id := gatherEnv(t, 2*time.Second) // the second batch joins well inside it
	combinedOnce(t, c, g, id)

	first := commitAsync(c, id, "x")
	waitFor(t, "the leader gathering", func() bool { return c.QueuedBatches(domain.PartitionRef{Topic: "t", TopicID: id}) == 1 })
	second := commitAsync(c, id, "y")
	for _, ch := range []<-chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	if runs := g.commits(); len(runs) != 3 || runs[2] != 2 {
		t.Fatalf("commit runs %v, want [1 2 2]: the gathered batches share one commit", runs)
	}
}

// Ensure that a partition fed by one caller at a time never gathers: with
// a gather bound of a minute, a lone batch after a lone batch commits at
// once.
func TestCombinerDoesNotGatherAfterALoneBatch(t *testing.T) {
	t.Parallel()
	_, c, g, id := gatherEnv(t, time.Minute)
	close(g.release)
	for _, p := range []string{"a", "b"} {
		answered(t, commitAsync(c, id, p))
	}
}

// answered fails the test unless ch yields a nil error well inside the
// minute-long gather bound the tests set: a batch that gathered would
// wait for the whole minute.
func answered(t *testing.T, ch <-chan error) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the batch is still waiting: it gathered")
	}
}

// Ensure that a combined cycle stops counting once it is older than the
// recent window: the next batch commits at once.
func TestCombinerForgetsAnOldCombinedCycle(t *testing.T) {
	t.Parallel()
	e, c, g, id := gatherEnv(t, time.Minute)
	combinedOnce(t, c, g, id)
	e.clock.Advance(time.Second)
	answered(t, commitAsync(c, id, "late"))
}

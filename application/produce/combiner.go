package produce

import (
	"context"
	"sync"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// combiner merges the batches that reach one partition at the same time
// into one durable commit (internals.md §3.8): with no cycle running, the
// arriving batch leads one; it takes every batch queued so far, appends
// them as one run with one CommitDurable (one fsync), and each batch gets
// its own contiguous offsets, or the shared error. Batches arriving during
// a cycle wait, and the oldest of them leads the next. A batch whose caller
// gave up before its cycle started is left out and answers its context's
// error: appending it would only make a duplicate of its retry.
//
// On a three-node cluster every partition receives commits from three
// dispatchers and the fan-out; without the combiner each paid its own
// fsync behind the partition's produce lock. Those dispatchers send their
// batches for a busy partition at the same busy boundaries
// (dispatcher_linger.go), so they arrive within a few milliseconds of each
// other: the leader of a cycle on a partition where several batches were
// combined recently first gathers, waiting combineGatherDuration for the
// others (ours, not the original's).
type combiner struct {
	logs  ports.PartitionWriter
	clock ports.Clock
	// gatherMax is combineGatherDuration (tests lengthen it).
	gatherMax time.Duration

	mu      sync.Mutex
	parts   map[domain.PartitionRef]*combineQueue
	sweptAt time.Time // when idle queues were last dropped
}

// combineQueue is one partition's waiting batches and whether a cycle runs.
type combineQueue struct {
	running bool
	waiting []*combineBatch
	// combinedAt is when a cycle last combined several batches, lastEnd
	// when the last cycle ended.
	combinedAt, lastEnd time.Time
}

// combineBatch is one caller's batch and, once answered, its outcome.
type combineBatch struct {
	ctx  context.Context
	recs []domain.Record
	// lead is closed when this batch is handed the next cycle; done when it
	// has its outcome. A batch that leads a cycle at once is answered by
	// its own cycle and has neither.
	lead, done chan struct{}
	first      int64
	err        error
}

func newCombiner(logs ports.PartitionWriter, clock ports.Clock) *combiner {
	return &combiner{logs: logs, clock: clock, gatherMax: combineGatherDuration, parts: make(map[domain.PartitionRef]*combineQueue)}
}

// commit commits recs to ref, sharing the fsync with whatever batches
// reached ref meanwhile, and returns the offset of recs[0].
func (c *combiner) commit(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (int64, error) {
	b := &combineBatch{ctx: ctx, recs: recs}
	if c.enqueue(ref, b) {
		c.cycle(ref) // b is among the batches it answers
		return b.first, b.err
	}
	select {
	case <-b.done:
	case <-b.lead:
		c.cycle(ref)
	}
	<-b.done
	return b.first, b.err
}

// enqueue queues b on ref and says whether b leads a cycle at once.
func (c *combiner) enqueue(ref domain.PartitionRef, b *combineBatch) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.parts[ref]
	if q == nil {
		q = &combineQueue{}
		c.parts[ref] = q
	}
	q.waiting = append(q.waiting, b)
	if !q.running {
		q.running = true
		return true
	}
	b.lead, b.done = make(chan struct{}), make(chan struct{}) // it waits for a cycle
	return false
}

// cycle commits every batch queued on ref (after gathering), then hands the
// next cycle to the oldest batch that queued meanwhile, or ends.
func (c *combiner) cycle(ref domain.PartitionRef) {
	c.gather(ref)
	c.mu.Lock()
	q := c.parts[ref]
	batches := q.waiting
	q.waiting = nil
	c.mu.Unlock()

	c.commitAll(ref, batches)

	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	q.lastEnd = now
	if len(batches) > 1 {
		q.combinedAt = now
	}
	if len(q.waiting) == 0 {
		clear(batches)
		q.waiting = batches[:0] // the next cycle's batches queue in this array
		q.running = false
		c.sweep(now)
		return
	}
	close(q.waiting[0].lead)
}

// gather lets batches sent at the same busy boundary by other callers
// join the cycle about to start on ref: when a cycle on ref combined
// several batches less than combineRecentDuration ago, it waits
// combineGatherDuration first. (How many callers will come is not known,
// so the wait is not cut short.)
func (c *combiner) gather(ref domain.PartitionRef) {
	c.mu.Lock()
	multi := c.clock.Now().Sub(c.parts[ref].combinedAt) < combineRecentDuration
	wait := c.gatherMax
	c.mu.Unlock()
	if multi {
		time.Sleep(wait)
	}
}

// sweep drops, at most once per combineRecentDuration, the queues of
// partitions idle for longer than that (their history no longer counts).
// c.mu is held.
func (c *combiner) sweep(now time.Time) {
	if now.Sub(c.sweptAt) < combineRecentDuration {
		return
	}
	c.sweptAt = now
	for ref, q := range c.parts {
		if !q.running && now.Sub(q.lastEnd) >= combineRecentDuration {
			delete(c.parts, ref)
		}
	}
}

// commitAll appends the live batches as one run and answers each.
func (c *combiner) commitAll(ref domain.PartitionRef, batches []*combineBatch) {
	live := batches[:0] // filtered in place
	total := 0
	for _, b := range batches {
		if err := b.ctx.Err(); err != nil {
			b.err = err
			b.answered()
			continue
		}
		live = append(live, b)
		total += len(b.recs)
	}
	if len(live) == 0 {
		return
	}
	run := live[0].recs
	if len(live) > 1 {
		run = make([]domain.Record, 0, total)
		for _, b := range live {
			run = append(run, b.recs...)
		}
	}
	// The run is every caller's: no one caller's cancellation stops it.
	first, err := c.logs.CommitDurable(context.WithoutCancel(live[0].ctx), ref, run)
	for _, b := range live {
		b.first, b.err = first, err
		first += int64(len(b.recs))
		b.answered()
	}
}

// answered wakes b's caller, if it waits for its outcome.
func (b *combineBatch) answered() {
	if b.done != nil {
		close(b.done)
	}
}

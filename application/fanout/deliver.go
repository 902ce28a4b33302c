package fanout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/narad/narad/application/pause"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// errUnplaced: the child partition has no owner yet; its bucket waits.
var errUnplaced = errors.New("fanout: child partition not placed")

// deliver commits recs to the child (internals.md §6.2 steps 2-5): the
// link re-validated after the read (a slab read across a detach is dropped
// unadvanced), buckets per child partition committed concurrently; on a
// partial failure only the failed partitions' records are kept (copied
// off the parent log), and after the backoff the link is re-checked and
// they are re-bucketed under the child's current partition count. It
// returns nil once every record is acknowledged, or the reason to stop
// (never having advanced).
func (c *cursor) deliver(recs []domain.Record) error {
	if c.isRemote() {
		if _, err := c.validate(); err != nil {
			return err
		}
		err := c.e.d.Remote.Ship(c.ctx, c.remoteCursor(), recs)
		if err != nil && !errors.Is(err, ErrReread) {
			if _, verr := c.validate(); verr != nil {
				return verr // the link changed under the send
			}
		}
		return err
	}
	pending, copied := recs, false
	for attempt := 0; ; attempt++ {
		sizes, err := c.validate()
		if err != nil {
			return err
		}
		failed, err := c.commitOnce(pending, sizes)
		if len(failed) == 0 {
			if attempt > 0 {
				c.log().Info("fan-out child commits recovered", slog.Int("attempts", attempt+1))
			}
			return nil
		}
		if !copied {
			failed, copied = cloneRecords(failed), true
		}
		pending = failed
		level := slog.LevelDebug
		if attempt%retryLogEveryCount == 0 {
			level = slog.LevelWarn // the first failure and every 30th: a long outage logs twice a minute, not every second
		}
		c.log().Log(c.ctx, level, "fan-out child commit failed; retrying the failed partitions",
			slog.Int("records", len(pending)), slog.Int("attempt", attempt+1), slog.Any("error", err))
		if !pause.For(c.ctx, c.e.o.RetryBackoff) {
			return c.ctx.Err()
		}
	}
}

// commitOnce buckets recs and commits every bucket, at most
// childCommitsInFlightMaxCount at once. It returns the records of the
// buckets that failed, in slab order, and one of their errors.
func (c *cursor) commitOnce(recs []domain.Record, sizes partitionCounts) ([]domain.Record, error) {
	n := int(sizes.child.Partitions)
	parts := c.assign(recs, sizes)
	buckets := bucketize(recs, parts, n)
	errs := make([]error, n)
	sem := make(chan struct{}, childCommitsInFlightMaxCount)
	var wg sync.WaitGroup
	for p, b := range buckets {
		if len(b) == 0 {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[p] = c.commitBucket(sizes.child, int32(p), b)
		}()
	}
	wg.Wait()
	var failed []domain.Record
	var first error
	for i, r := range recs {
		if err := errs[parts[i]]; err != nil {
			failed = append(failed, r)
			if first == nil {
				first = err
			}
		}
	}
	return failed, first
}

// assign picks each record's child partition (§6.2 step 3): a keyed record
// by FNV-1a of its key, a keyless one onto the parent partition's index
// when the child has the parent's partition count, else round-robin.
func (c *cursor) assign(recs []domain.Record, sizes partitionCounts) []int32 {
	n := sizes.child.Partitions
	sameShape := n == sizes.parentCount && c.key.partition < n
	parts := make([]int32, len(recs))
	for i, r := range recs {
		switch {
		case len(r.Key) > 0:
			parts[i] = domain.KeyPartition(r.Key, int(n))
		case sameShape:
			parts[i] = c.key.partition
		default:
			parts[i] = int32(c.rr % uint32(n))
			c.rr++
		}
	}
	return parts
}

// bucketize is a counting sort of recs by partition: each bucket keeps slab
// order, hence per-key order. The buckets share one backing array.
func bucketize(recs []domain.Record, parts []int32, n int) [][]domain.Record {
	start := make([]int, n+1)
	for _, p := range parts {
		start[p+1]++
	}
	for p := 1; p <= n; p++ {
		start[p] += start[p-1]
	}
	sorted := make([]domain.Record, len(recs))
	pos := append([]int(nil), start[:n]...)
	for i, r := range recs {
		sorted[pos[parts[i]]] = r
		pos[parts[i]]++
	}
	out := make([][]domain.Record, n)
	for p := range n {
		out[p] = sorted[start[p]:start[p+1]]
	}
	return out
}

// commitBucket commits recs to child partition p through its owner: this
// node's committer, or CommitProduceBatch to the owner (30 s). The request
// carries the child's incarnation; the owner stamps its own commit time.
func (c *cursor) commitBucket(child meta.Topic, p int32, recs []domain.Record) error {
	row, ok, err := c.e.d.Store.Assignment(child.Name, p)
	switch {
	case err != nil:
		return fmt.Errorf("fanout: assignment of %s/%d: %w", child.Name, p, err)
	case !ok || row.Owner == "" || !row.BelongsTo(child.ID):
		return fmt.Errorf("fanout: %s/%d: %w", child.Name, p, errUnplaced)
	}
	req := ports.CommitRequest{Topic: child.Name, TopicID: domain.TopicID(child.ID), Partition: p, Records: make([]domain.Record, len(recs))}
	for i, r := range recs {
		req.Records[i] = domain.Record{Key: r.Key, Payload: r.Payload}
	}
	if row.Owner == c.e.d.Self {
		_, err = c.e.d.Local.CommitBatch(c.ctx, req)
	} else {
		ctx, cancel := context.WithTimeout(c.ctx, peerCommitTimeout)
		_, err = c.e.d.Peers.CommitBatch(ctx, row.Owner, req)
		cancel()
	}
	if err != nil {
		return fmt.Errorf("fanout: commit %d records to %s/%d on %s: %w", len(recs), child.Name, p, row.Owner, err)
	}
	return nil
}

// cloneRecords copies recs off the parent log's buffers: a long outage
// must not pin them.
func cloneRecords(recs []domain.Record) []domain.Record {
	out := make([]domain.Record, len(recs))
	for i, r := range recs {
		out[i] = domain.Record{Offset: r.Offset, Key: bytes.Clone(r.Key), Payload: bytes.Clone(r.Payload), CommittedAtMs: r.CommittedAtMs}
	}
	return out
}

// advance persists the cursor past s once every record of s is committed
// (§6.2 step 6), retrying a failed write; then it counts what was copied
// and what was lost. A parent partition directory that is gone stops the
// cursor.
func (c *cursor) advance(s slab) error {
	for {
		err := c.e.d.Cursors.Store(c.ref, c.key.child, ports.FanoutCursor{Epoch: c.epoch, NextOffset: s.end})
		if err == nil {
			break
		}
		if errors.Is(err, domain.ErrPartitionDirGone) {
			return err
		}
		c.log().Warn("fan-out cursor not persisted; retrying", slog.Int64("offset", s.end), slog.Any("error", err))
		if !pause.For(c.ctx, c.e.o.RetryBackoff) {
			return c.ctx.Err()
		}
		if _, err := c.validate(); err != nil {
			return err
		}
	}
	c.next.Store(s.end)
	m := c.e.d.Metrics
	if len(s.recs) > 0 {
		m.Copied(c.key.parent, c.key.child, len(s.recs))
		m.Batch(len(s.recs), s.bytes)
	}
	if s.dropped > 0 {
		m.Dropped(c.key.parent, c.key.child, s.dropped)
		c.log().Warn("fan-out records lost to the child", slog.Int64("records", s.dropped), slog.Int64("next", s.end))
	}
	return nil
}

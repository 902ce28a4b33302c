package fanout

import (
	"errors"
	"github.com/narad/narad/application/pause"
	"github.com/narad/narad/domain/remote"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// slab is one read of the parent: the records to deliver, where the cursor
// stands once they are delivered, and the offsets skipped on the way
// (aged out or unreadable), counted as lost only after the advance.
type slab struct {
	recs    []domain.Record
	end     int64
	dropped int64
	bytes   int
}

// readSlab reads from next (internals.md §6.2 step 1): a long-poll of at
// most LongPoll when nothing is there, then a top-up until the record or
// byte cap or the linger; never past the high watermark. Offsets below the
// oldest retained one are jumped over (drop-behind), unreadable ones
// skipped. A delay child's slab stops at the first record not yet due, and
// when that is the first one the cursor sleeps until it is due.
//
// A cursor at the tail waits on the bounds (a peek) and Changed, never on
// Read: only a backlog read counts as use of the parent's log, so an idle
// link keeps no log open.
func (c *cursor) readSlab(next int64) (slab, error) {
	s := slab{end: next}
	for s.dropped < int64(c.e.o.BatchMaxRecords) {
		wake, err := c.e.d.Logs.Changed(c.ref)
		if err != nil {
			return slab{end: next}, err
		}
		b, err := c.e.d.Logs.Bounds(c.ref)
		switch {
		case err != nil:
			return slab{end: next}, err
		case s.end >= b.HighWatermark:
			c.dueLagMs.Store(0)
			if s.dropped == 0 {
				waitFor(c.ctx, wake, c.e.o.LongPoll)
			}
			return s, nil
		case s.end < b.Oldest:
			s.dropBehind(b)
			continue
		}
		maxRecords, maxBytes := c.slabCaps()
		recs, err := c.e.d.Logs.Read(c.ctx, c.ref, s.end, maxRecords, maxBytes)
		switch {
		case err == nil:
			return c.fill(s, recs), nil
		case errors.Is(err, domain.ErrOffsetNotWritten):
			return s, nil
		case errors.Is(err, domain.ErrOffsetGone):
			if err := c.skipGone(&s); err != nil {
				return slab{end: next}, err
			}
		case errors.Is(err, domain.ErrRecordCorrupt):
			s.end++
			s.dropped++
		default:
			return slab{end: next}, err
		}
	}
	return s, nil
}

// skipGone moves s past an offset the log no longer has: below the oldest
// retained record it jumps to it, counting only offsets that had been
// visible; inside the log it is a gap of one.
func (c *cursor) skipGone(s *slab) error {
	b, err := c.e.d.Logs.Bounds(c.ref)
	if err != nil {
		return err
	}
	if s.end < b.Oldest {
		s.dropBehind(b)
		return nil
	}
	s.end++
	s.dropped++
	return nil
}

// dropBehind jumps s from below the oldest retained record to it, counting
// as lost only the offsets that had been visible.
func (s *slab) dropBehind(b ports.LogBounds) {
	s.dropped += max(min(b.Oldest, b.HighWatermark)-s.end, 0)
	s.end = b.Oldest
}

// fill completes a slab whose first read returned recs: top up while
// everything read is due, then cut at the first record not yet due.
func (c *cursor) fill(s slab, recs []domain.Record) slab {
	due, blockedAt := c.due(recs)
	if len(due) == len(recs) {
		due, blockedAt = c.due(c.topUp(recs))
	}
	c.noteDue(due, blockedAt)
	if len(due) == 0 {
		c.sleepUntilDue(blockedAt)
		return s
	}
	s.recs = due
	s.end = due[len(due)-1].Offset + 1
	s.bytes = keyPayloadBytes(due)
	return s
}

// topUp reads on after recs until the slab is full or the linger passes.
func (c *cursor) topUp(recs []domain.Record) []domain.Record {
	deadline := time.Now().Add(c.e.o.Linger)
	size := keyPayloadBytes(recs)
	maxRecords, maxBytes := c.slabCaps()
	for len(recs) < maxRecords && size < maxBytes {
		from := recs[len(recs)-1].Offset + 1
		w, err := c.e.d.Logs.Changed(c.ref)
		if err != nil {
			return recs
		}
		more, err := c.e.d.Logs.Read(c.ctx, c.ref, from, maxRecords-len(recs), maxBytes-size)
		if errors.Is(err, domain.ErrOffsetNotWritten) {
			if !waitFor(c.ctx, w, time.Until(deadline)) {
				return recs
			}
			continue
		}
		if err != nil || len(more) == 0 {
			return recs // a gap or a damaged frame waits for the next slab
		}
		size += keyPayloadBytes(more)
		recs = append(recs, more...)
	}
	return recs
}

// keyPayloadBytes is what BatchMaxBytes and the batch-bytes histogram count.
func keyPayloadBytes(recs []domain.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Key) + len(r.Payload)
	}
	return n
}

// due returns the prefix of recs deliverable now (§6.4): for a delay child
// the records committed at or before now − delay; blockedAt is the commit
// time of the first record held back (0 when none).
func (c *cursor) due(recs []domain.Record) (deliverable []domain.Record, blockedAt int64) {
	if c.delayMs <= 0 {
		return recs, 0
	}
	cutoff := max(c.e.d.Clock.Now().UnixMilli()-c.delayMs, 1)
	for i, r := range recs {
		if r.CommittedAtMs > cutoff {
			return recs[:i], r.CommittedAtMs
		}
	}
	return recs, 0
}

// noteDue records the delay gauges: how late the oldest deliverable record
// is, and when the held-back one becomes due.
func (c *cursor) noteDue(due []domain.Record, blockedAt int64) {
	if c.delayMs <= 0 {
		return
	}
	lag := int64(0)
	if len(due) > 0 {
		lag = max(c.e.d.Clock.Now().UnixMilli()-(due[0].CommittedAtMs+c.delayMs), 0)
	}
	c.dueLagMs.Store(lag)
	if blockedAt > 0 && len(due) == 0 {
		c.blockedUntilMs.Store(blockedAt + c.delayMs)
	} else {
		c.blockedUntilMs.Store(0)
	}
}

// sleepUntilDue sleeps until the record committed at blockedAt is due,
// capped at DelaySleepMax; stopping the cursor wakes it.
func (c *cursor) sleepUntilDue(blockedAt int64) {
	wait := time.Duration(blockedAt+c.delayMs-c.e.d.Clock.Now().UnixMilli()) * time.Millisecond
	pause.For(c.ctx, min(max(wait, time.Millisecond), c.e.o.DelaySleepMax))
}

// slabCaps are a slab's record and byte caps: the engine's, and for a
// remote child at most 500 records and 1 MiB per lane (internals.md §7.2).
func (c *cursor) slabCaps() (records, bytes int) {
	records, bytes = c.e.o.BatchMaxRecords, c.e.o.BatchMaxBytes
	if c.isRemote() {
		records = min(records, int(c.lanes)*remote.SlabMaxRecordsPerLane)
		bytes = min(bytes, int(c.lanes)*remote.SlabMaxBytesPerLane)
	}
	return records, bytes
}

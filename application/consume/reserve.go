package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/lease"
	"github.com/narad/narad/domain/meta"
)

// scope is what one consume may read: one pinned partition, or every local
// partition of the topic from a rotating start.
type scope struct {
	pinned    bool
	partition int32
	verified  bool // the pinned partition was just checked to be local
	// claim: a peer's claim after a delivery-token notification, which may
	// take records held back for notified nodes; other unpinned passes
	// leave them (internals.md §5.5).
	claim bool
}

// pass makes one non-blocking attempt over the scope's partitions, staying
// on a partition until it runs dry or hits its cap, and stops once max
// records are taken or their keys and payloads reach budget bytes (the
// record crossing it is kept). A queue pass skips a partition whose log is
// closing; it fails only when nothing was taken and some partition failed.
// An unpinned pass other than a claim takes no record held back for a
// notified node.
func (s *Service) pass(ctx context.Context, t meta.Topic, sc scope, max, budget int) ([]domain.Delivery, error) {
	if !sc.pinned && !sc.claim {
		if max = s.unheld(ctx, t, max); max <= 0 {
			return nil, nil
		}
	}
	parts, err := s.partitionsOf(t, sc)
	if err != nil {
		return nil, err
	}
	var out []domain.Delivery
	var firstErr error
	bytes := 0
	for _, p := range parts {
		var err error
		out, bytes, err = s.takeFrom(ctx, t, sc, p, out, max, budget, bytes)
		if err != nil {
			if sc.pinned || ctx.Err() != nil {
				s.release(out, "")
				return nil, err
			}
			if !errors.Is(err, domain.ErrLogClosed) && firstErr == nil {
				firstErr = err
			}
		}
		if len(out) >= max || bytes >= budget {
			break
		}
	}
	if len(out) == 0 {
		return nil, firstErr
	}
	return out, nil
}

// takeFrom reserves from partition p onto out until out holds max records
// or budget bytes of keys and payloads, or p runs dry or fails. For a topic
// with a dead-letter policy each round of reservations is counted before it
// is kept (countReceives); a round that diverted some to the dead-letter
// topic is followed by another. A failure that fails the whole pass (a
// pinned scope, a cancelled ctx) returns at once, uncounted: the caller
// gives everything back.
func (s *Service) takeFrom(ctx context.Context, t meta.Topic, sc scope, p int32, out []domain.Delivery, max, budget, bytes int) ([]domain.Delivery, int, error) {
	maxReceives := s.maxReceivesOf(t)
	for {
		start, bytesBefore := len(out), bytes
		var ahead readAhead
		var err error
		for len(out) < max && bytes < budget {
			d, ok, rerr := s.reserveOne(ctx, t, p, &ahead, max-len(out), budget-bytes)
			if rerr != nil || !ok {
				err = rerr
				break
			}
			if out == nil { // one allocation for a full batch, none for an empty pass
				out = make([]domain.Delivery, 0, min(max, BatchMaxMessages))
			}
			out = append(out, d)
			bytes += len(d.Record.Key) + len(d.Record.Payload)
		}
		if maxReceives == 0 || len(out) == start || (err != nil && (sc.pinned || ctx.Err() != nil)) {
			return out, bytes, err
		}
		kept, diverted, cerr := s.countReceives(ctx, t, p, out[start:])
		out, bytes = out[:start+len(kept)], bytesBefore
		for _, d := range kept {
			bytes += len(d.Record.Key) + len(d.Record.Payload)
		}
		if cerr != nil {
			return out, bytes, cerr
		}
		if err != nil || diverted == 0 || len(out) >= max || bytes >= budget {
			return out, bytes, err
		}
	}
}

// partitionsOf lists the partitions a pass reads, local ones only.
func (s *Service) partitionsOf(t meta.Topic, sc scope) ([]int32, error) {
	if sc.pinned && sc.verified {
		return []int32{sc.partition}, nil
	}
	if sc.pinned {
		where, _, err := s.placementOf(t, sc.partition)
		if err != nil || where != local {
			return nil, err
		}
		return []int32{sc.partition}, nil
	}
	parts, err := s.localPartitions(t)
	if err != nil || len(parts) < 2 {
		return parts, err
	}
	start := int(s.rotor.Add(1) % uint32(len(parts)))
	return append(parts[start:], parts[:start]...), nil
}

// readAhead keeps the records a pass read past its last reservation on one
// partition, so the next reservations there (usually the following offsets)
// are served without another read. Committed records below the high
// watermark never change, and each is still handed out only under its own
// fresh lease.
type readAhead struct {
	base int64
	recs []domain.Record
}

// at is the record at off, if it was read ahead.
func (r *readAhead) at(off int64) (domain.Record, bool) {
	if off < r.base || off-r.base >= int64(len(r.recs)) {
		return domain.Record{}, false
	}
	return r.recs[off-r.base], true
}

// reserveOne leases the next deliverable offset of partition p and reads
// its record: reserve before read, reading up to want records (and about
// wantBytes of keys and payloads) from there into ahead for the
// reservations that follow. An unreadable record is
// skipped with the reservation's own nonce; a reservation retention outran
// is dropped and the search goes on above the new frontier; a closing log
// gives the reservation back and fails the attempt (internals.md §5.2).
func (s *Service) reserveOne(ctx context.Context, t meta.Topic, p int32, ahead *readAhead, want, wantBytes int) (domain.Delivery, bool, error) {
	ref := refOf(t, p)
	sh, err := s.shard(ref, capsOf(t))
	if err != nil {
		return domain.Delivery{}, false, err
	}
	for range corruptSkipsPerSearch {
		b, err := s.logs.Bounds(ref)
		if err != nil {
			return domain.Delivery{}, false, fmt.Errorf("consume: bounds of %s: %w", ref, err)
		}
		if b.Frozen {
			// A move is about to hand the partition over: no new lease
			// (internals.md §11.3 step 3); outstanding ones still settle.
			return domain.Delivery{}, false, nil
		}
		l, ok := s.reserveLease(sh, t, b.HighWatermark, b.Oldest)
		if !ok {
			return domain.Delivery{}, false, nil
		}
		rec, ok := ahead.at(l.Offset)
		if !ok {
			recs, err := s.logs.Read(ctx, ref, l.Offset, want, max(wantBytes, 1))
			if err != nil || len(recs) == 0 {
				if done, err := s.readFailed(ctx, sh, l, err); done {
					return domain.Delivery{}, false, err
				}
				continue
			}
			*ahead = readAhead{base: l.Offset, recs: recs}
			rec = recs[0]
		}
		h := domain.ReceiptHandle{Partition: p, Offset: l.Offset, Nonce: l.Nonce}
		return domain.Delivery{Topic: t.Name, Partition: p, Record: rec, Handle: &h}, true, nil
	}
	return domain.Delivery{}, false, nil
}

// reserveLease reserves under the shard's lock, applying the topic's
// current caps and redelivery backoff and persisting a retention jump of
// the frontier.
func (s *Service) reserveLease(sh *shard, t meta.Topic, hwm, oldest int64) (lease.Lease, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone {
		return lease.Lease{}, false
	}
	sh.l.SetCaps(capsOf(t))
	sh.l.SetBackoff(backoffOf(t))
	before := sh.l.Committed()
	l, ok := sh.l.Reserve(s.nowMs(), hwm, oldest, visibilityOf(t))
	if after := sh.l.Committed(); after != before {
		if after == oldest-1 && before < after {
			s.log.Warn("retention outran the consumers: frontier jumped to the oldest retained offset",
				slog.String("partition", sh.ref.String()), slog.Int64("from", before), slog.Int64("to", after))
		}
		s.committer.markDirty(sh)
	}
	return l, ok
}

// readFailed settles a reservation whose read failed. done says whether the
// search must stop (with err, nil when merely nothing is there).
func (s *Service) readFailed(ctx context.Context, sh *shard, l lease.Lease, err error) (bool, error) {
	switch {
	case err == nil || errors.Is(err, domain.ErrOffsetNotWritten):
		s.giveBack(sh, l)
		return true, nil
	case errors.Is(err, domain.ErrRecordCorrupt):
		s.skipCorrupt(sh, l, err)
		return false, nil
	case errors.Is(err, domain.ErrOffsetGone):
		if b, berr := s.logs.Bounds(sh.ref); berr == nil && l.Offset < b.Oldest {
			s.giveBack(sh, l) // retention outran us: the next reserve jumps
			return false, nil
		}
		s.skipCorrupt(sh, l, err) // a gap left by damage
		return false, nil
	case ctx.Err() != nil:
		s.giveBack(sh, l)
		return true, ctx.Err()
	}
	s.giveBack(sh, l)
	return true, fmt.Errorf("consume: read %s at %d: %w", sh.ref, l.Offset, err)
}

// skipCorrupt settles an unreadable offset with the reservation's nonce, so
// the frontier can pass it and no client can force a skip (story F15).
func (s *Service) skipCorrupt(sh *shard, l lease.Lease, cause error) {
	sh.mu.Lock()
	err := sh.l.SkipCorrupt(l.Offset, l.Nonce, s.nowMs())
	if err == nil {
		s.committer.markDirty(sh)
	}
	sh.mu.Unlock()
	if err != nil {
		return // the lease lapsed or retention dropped it meanwhile
	}
	s.metrics.CorruptSkipped(sh.ref.Topic, sh.ref.Partition)
	s.log.Error("skipped an unreadable record", slog.String("partition", sh.ref.String()),
		slog.Int64("offset", l.Offset), slog.String("error", cause.Error()))
}

// giveBack releases a reservation that was never handed out: free at once
// and not counted as a delivery, whatever the topic's redelivery backoff.
func (s *Service) giveBack(sh *shard, l lease.Lease) {
	sh.mu.Lock()
	err := sh.l.GiveBack(l.Offset, l.Nonce, s.nowMs())
	sh.mu.Unlock()
	if err == nil {
		s.pump.wake(sh.ref.Topic)
	}
}

// release gives back deliveries that will not reach their consumer; op
// names the metric they count under ("" for none).
func (s *Service) release(ds []domain.Delivery, op string) {
	for _, d := range ds {
		if d.Handle == nil {
			continue
		}
		if sh := s.shardOfDelivery(d); sh != nil {
			s.giveBack(sh, lease.Lease{Offset: d.Handle.Offset, Nonce: d.Handle.Nonce})
			if op != "" {
				s.metrics.LeaseSettled(d.Topic, op)
			}
		}
	}
}

// shardOfDelivery finds the shard a delivery was reserved on: the live
// incarnation of its topic.
func (s *Service) shardOfDelivery(d domain.Delivery) *shard {
	t, err := s.topic(d.Topic)
	if err != nil {
		return nil
	}
	return s.existing(refOf(t, d.Partition))
}

// trimToReply keeps the deliveries whose encoded envelopes fit in the reply
// bound (at least one) and releases the rest as nacks (internals.md §5.6).
func (s *Service) trimToReply(ds []domain.Delivery) []domain.Delivery {
	bound := 0
	for _, d := range ds {
		bound += envelopeBound(d)
	}
	if bound <= batchReplyBytesMax {
		return ds
	}
	var scratch []byte
	size := 0
	for i, d := range ds {
		scratch = domain.AppendEnvelope(scratch[:0], d)
		if i > 0 && size+len(scratch)+1 > batchReplyBytesMax {
			s.release(ds[i:], "nack")
			return ds[:i]
		}
		size += len(scratch) + 1 // the separating comma
	}
	return ds
}

// envelopeBound is an upper bound of d's encoded envelope.
func envelopeBound(d domain.Delivery) int {
	return envelopeOverheadMax + envelopeEscapeFactor*(len(d.Topic)+len(d.Record.Key)+len(d.Record.Payload))
}

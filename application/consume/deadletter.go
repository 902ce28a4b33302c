package consume

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// receives is one partition's receive-count table (domain/deadletter) and
// what is known to be settled durably. mu serialises the partition's
// receive log: plan, append, apply.
type receives struct {
	mu     sync.Mutex
	table  *deadletter.Table // nil until loaded
	loaded bool
	// compacted is the log's size after its last compaction: the next
	// waits until it has doubled, so a log of many unsettled offsets is
	// not rewritten at every append.
	compacted int64
	// durable is the frontier the offset store holds synced: offsets at or
	// below it are settled for good, so the table may forget them.
	durable atomic.Int64
}

// maxReceivesOf is t's maximum receive count; 0 when t has no dead-letter
// policy or this node keeps no receive log.
func (s *Service) maxReceivesOf(t meta.Topic) uint32 {
	if t.DeadLetter == nil || s.receiveLog == nil || s.deadLetters == nil {
		return 0
	}
	return t.DeadLetter.MaxReceiveCount
}

// countReceives counts one receive for each delivery of partition p just
// reserved, durably before any is handed out, and diverts those whose
// delivery would exceed the topic's maximum to the dead-letter topic. It
// answers the deliveries to hand out and how many were diverted. When the
// count cannot be persisted every delivery is given back unread and the
// error returned. When a move's freeze began after they were reserved,
// every delivery is given back uncounted: a count appended now could land
// after the listing the move copies, and the partition's new owner would
// count one receive short. The source's handoff sees the reservations in
// flight until then and lists again once they are gone (internals.md §11.3
// step 3).
func (s *Service) countReceives(ctx context.Context, t meta.Topic, p int32, ds []domain.Delivery) ([]domain.Delivery, int, error) {
	sh := s.existing(refOf(t, p))
	if sh == nil {
		s.release(ds, "")
		return nil, 0, fmt.Errorf("consume: %s/%d: %w", t.Name, p, domain.ErrLogClosed)
	}
	rc := &sh.recv
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err := s.loadReceives(sh); err != nil {
		s.release(ds, "")
		return nil, 0, err
	}
	if b, err := s.logs.Bounds(sh.ref); err == nil && b.Frozen {
		s.release(ds, "")
		return nil, 0, nil
	}
	maxReceives := t.DeadLetter.MaxReceiveCount
	steps := make([]deadletter.Step, len(ds))
	recs := make([]deadletter.Record, 0, len(ds))
	for i, d := range ds {
		steps[i] = rc.table.Receive(d.Handle.Offset, maxReceives)
		if steps[i].Record.Kind != 0 {
			recs = append(recs, steps[i].Record)
		}
	}
	if len(recs) > 0 {
		if err := s.receiveLog.Append(sh.ref, recs); err != nil {
			s.release(ds, "")
			return nil, 0, fmt.Errorf("consume: receive counts of %s: %w", sh.ref, err)
		}
		for _, r := range recs {
			rc.table.Apply(r)
		}
	}
	kept := ds[:0]
	diverted := 0
	for i, d := range ds {
		if !steps[i].DeadLetter {
			kept = append(kept, d)
			continue
		}
		diverted++
		letter := letterOf(d, steps[i].Count, rc.table.Reason(d.Handle.Offset))
		s.background.Go(func() { s.deadLetter(context.WithoutCancel(ctx), t, sh, *d.Handle, letter) })
	}
	s.compactReceives(sh)
	return kept, diverted, nil
}

// loadReceives reads sh's receive log once; offsets the frontier settled
// are dropped at the next compaction. Call with sh.recv.mu held.
func (s *Service) loadReceives(sh *shard) error {
	rc := &sh.recv
	if rc.loaded {
		return nil
	}
	recs, err := s.receiveLog.Load(sh.ref)
	if err != nil {
		return fmt.Errorf("consume: load the receive counts of %s: %w", sh.ref, err)
	}
	rc.table = deadletter.NewTable()
	for _, r := range recs {
		rc.table.Apply(r)
	}
	rc.loaded = true
	return nil
}

// compactReceives rewrites sh's receive log to what is not settled for
// good once it has grown past receiveLogCompactBytes and twice its size
// after the last compaction; call with sh.recv.mu held. A failed rewrite
// leaves the old log, which is still right, and is tried again later.
func (s *Service) compactReceives(sh *shard) {
	size := s.receiveLog.Size(sh.ref)
	if size < receiveLogCompactBytes || size < 2*sh.recv.compacted {
		return
	}
	defer func() { sh.recv.compacted = s.receiveLog.Size(sh.ref) }()
	frontier := sh.recv.durable.Load()
	sh.recv.table.Prune(func(off int64) bool { return off <= frontier })
	if err := s.receiveLog.Compact(sh.ref, sh.recv.table.Live()); err != nil {
		s.log.Warn("receive log compaction failed; the old log is kept",
			slog.String("partition", sh.ref.String()), slog.String("error", err.Error()))
	}
}

// letterOf is what the dead-letter topic receives for d.
func letterOf(d domain.Delivery, count uint32, reason string) deadletter.Letter {
	return deadletter.Letter{
		Topic: d.Topic, Partition: d.Partition, Offset: d.Record.Offset,
		TimestampS: d.Record.CommittedAtMs / 1000, ReceiveCount: count, Reason: reason,
		Key: d.Record.Key, Payload: d.Record.Payload,
	}
}

// deadLetter writes one letter to t's dead-letter topic and then settles
// its origin under the lease it was reserved with. Its intent is already
// durable, so the origin never hands the message out again; a failed write
// holds the lease back for deadLetterRetryDelay, after which the next
// reservation of the offset tries again. A crash between the write and the
// origin's durable ack writes the letter again after the restart.
func (s *Service) deadLetter(ctx context.Context, t meta.Topic, sh *shard, h domain.ReceiptHandle, l deadletter.Letter) {
	ctx, cancel := context.WithTimeout(ctx, deadLetterProduceTimeout)
	defer cancel()
	err := s.deadLetters.ProduceDeadLetter(ctx, t.DeadLetter.Topic, l.Key, deadletter.AppendLetter(nil, l))
	if err != nil {
		s.log.Warn("dead-letter write failed; the message stays in its origin and is tried again",
			slog.String("partition", sh.ref.String()), slog.Int64("offset", h.Offset),
			slog.String("dead_letter_topic", t.DeadLetter.Topic), slog.String("error", err.Error()))
		s.metrics.DeadLetterFailed(t.Name)
		s.holdBack(sh, h)
		return
	}
	if err := s.settleOn(sh, t, h, OpAck, 0); err != nil && !errors.Is(err, domain.ErrLeaseGone) {
		s.log.Warn("dead letter written but its origin not settled; it is written again",
			slog.String("partition", sh.ref.String()), slog.Int64("offset", h.Offset), slog.String("error", err.Error()))
	}
	s.metrics.MessagesDeadLettered(t.Name, 1)
}

// holdBack keeps a reservation whose dead-letter write failed out of
// delivery for deadLetterRetryDelay.
func (s *Service) holdBack(sh *shard, h domain.ReceiptHandle) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if !sh.gone {
		_ = sh.l.Defer(h.Offset, h.Nonce, s.nowMs(), deadLetterRetryDelay.Milliseconds())
	}
}

// forgetReceives drops ref's receive-log descriptors and memory.
func (s *Service) forgetReceives(ref domain.PartitionRef) {
	if s.receiveLog != nil {
		s.receiveLog.Forget(ref)
	}
}

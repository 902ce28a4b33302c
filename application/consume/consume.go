package consume

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Mode is how a consume reads (api.md §2.14).
type Mode int

const (
	// ModeQueue leases one message from any local partition.
	ModeQueue Mode = iota
	// ModePinned leases one message from Request.Partition.
	ModePinned
	// ModeBatch leases up to Request.Max messages, each separately, from
	// the local partitions or from Request.Partition when Pinned is set.
	ModeBatch
	// ModeReplay reads the record at (Partition, Offset) without a lease.
	ModeReplay
)

// Request is one consume.
type Request struct {
	Topic     string
	Mode      Mode
	Partition int32 // ModePinned, ModeReplay; ModeBatch when Pinned
	Pinned    bool  // ModeBatch only: read Partition alone
	Offset    int64 // ModeReplay
	Max       int   // ModeBatch: 1..BatchMaxMessages
	// Wait is the long-poll budget, already clamped by the caller; <= 0
	// answers at once. Replay ignores it.
	Wait time.Duration
	// Identity is who counts against the per-identity consume cap: the
	// authenticated user, or the client address when security is off.
	Identity string
}

func (r Request) max() int {
	if r.Mode == ModeBatch {
		return r.Max
	}
	return 1
}

func (r Request) scope() scope {
	return scope{pinned: r.Mode == ModePinned || r.Mode == ModeReplay || (r.Mode == ModeBatch && r.Pinned), partition: r.Partition}
}

// Consume serves one request: the leased deliveries (each with its receipt
// handle), none when nothing became available within the wait, or for a
// replay the one record (domain.ErrOffsetNotWritten past the high
// watermark). Errors: domain.ErrTopicNotFound, domain.ErrPartitionOutOfRange,
// domain.ErrInvalidArgument, domain.ErrNotOwner (another node's partition),
// domain.ErrTooManyConsumes, domain.ErrLogClosed (transient), the replay
// errors of Replay, ctx.Err().
func (s *Service) Consume(ctx context.Context, req Request) ([]domain.Delivery, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if req.Mode == ModeBatch && (req.Max < 1 || req.Max > BatchMaxMessages) {
		return nil, domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf("invalid max: want an integer from 1 to %d", BatchMaxMessages))
	}
	done, err := s.admission.admit(req.Identity, req.max())
	if err != nil {
		return nil, err
	}
	defer done()
	if req.Mode == ModeReplay {
		d, err := s.replay(ctx, req.Topic, req.Partition, req.Offset)
		if err != nil {
			return nil, err
		}
		return []domain.Delivery{d}, nil
	}
	t, err := s.topic(req.Topic)
	if err != nil {
		return nil, err
	}
	sc, err := s.checkPinned(t, req.scope())
	if err != nil {
		return nil, err
	}
	return s.lease(ctx, t, sc, req)
}

// checkPinned refuses a partition out of range or owned by another node,
// and marks a local one verified for the first pass.
func (s *Service) checkPinned(t meta.Topic, sc scope) (scope, error) {
	if !sc.pinned {
		return sc, nil
	}
	if sc.partition < 0 || sc.partition >= t.Partitions {
		return sc, domain.ErrPartitionOutOfRange
	}
	where, err := s.placementOf(t, sc.partition)
	if err != nil {
		return sc, err
	}
	if where == remote {
		return sc, fmt.Errorf("consume: %s/%d: %w", t.Name, sc.partition, domain.ErrNotOwner)
	}
	sc.verified = where == local
	return sc, nil
}

// lease runs the queue, pinned and batch modes: one non-blocking pass; if
// it found nothing, a long poll for one record topped up by a second pass.
func (s *Service) lease(ctx context.Context, t meta.Topic, sc scope, req Request) ([]domain.Delivery, error) {
	start := s.clock.Now()
	max := req.max()
	ds, err := s.pass(ctx, t, sc, max, batchScanBytesMax)
	sc.verified = false // ownership may change while waiting: look again
	outcome := "hit"
	switch {
	case err != nil:
		return nil, err
	case len(ds) == 0 && req.Wait <= 0:
		outcome = "no_wait"
	case len(ds) == 0:
		if ds, err = s.waitForOne(ctx, t, sc, req.Wait); err != nil {
			s.metrics.ConsumeWaited(t.Name, "cancelled", s.clock.Now().Sub(start))
			return nil, err
		}
		if len(ds) == 0 {
			outcome = "timeout"
		} else if max > 1 {
			ds = s.topUp(ctx, t, sc, ds, max)
		}
	}
	if err := ctx.Err(); err != nil && len(ds) > 0 {
		s.release(ds, "") // cancelled at hand-over: free them now, not after the visibility timeout
		s.metrics.ConsumeWaited(t.Name, "cancelled", s.clock.Now().Sub(start))
		return nil, err
	}
	s.metrics.ConsumeWaited(t.Name, outcome, s.clock.Now().Sub(start))
	ds = s.trimToReply(ds)
	for _, d := range ds {
		s.metrics.MessagesConsumed(t.Name, d.Partition, 1, len(d.Record.Payload))
	}
	return ds, nil
}

// topUp adds what one more non-blocking pass finds to the record a long
// poll delivered.
func (s *Service) topUp(ctx context.Context, t meta.Topic, sc scope, ds []domain.Delivery, max int) []domain.Delivery {
	used := len(ds[0].Record.Key) + len(ds[0].Record.Payload)
	if used >= batchScanBytesMax {
		return ds
	}
	more, err := s.pass(ctx, t, sc, max-1, batchScanBytesMax-used)
	if err != nil {
		return ds
	}
	return append(ds, more...)
}

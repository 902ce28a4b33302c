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
	// ForwardIdentity is the identity a request forwarded to another owner
	// carries (the authenticated user; empty with security off, where the
	// owner keeps one bucket for forwarded consumes).
	ForwardIdentity string
	// LocalOnly serves the request from this node's own partitions and
	// never forwards it: a probe (local_only=1) or any request that arrived
	// from a peer (internals.md §5.5).
	LocalOnly bool
	// Claim marks a peer's claim after this node notified it (delivery
	// tokens, internals.md §5.5): with LocalOnly, it retires one hold of
	// the topic on arrival and may take the record held for it.
	Claim bool
	// TokenFor and TokenTTL ride a peer's probe: when the request finds
	// nothing to hand out, this node keeps a delivery token of Topic for
	// node TokenFor lasting TokenTTL, as a TokenRegister (op 30) would, so
	// an empty probe and its registration take one round trip (internals.md
	// §5.5). Only the owner's view (Owner) reads them.
	TokenFor string
	TokenTTL time.Duration
}

func (r Request) max() int {
	if r.Mode == ModeBatch {
		return r.Max
	}
	return 1
}

func (r Request) scope() scope {
	return scope{pinned: r.Mode == ModePinned || r.Mode == ModeReplay || (r.Mode == ModeBatch && r.Pinned), partition: r.Partition, claim: r.Claim && r.LocalOnly}
}

// Consume serves one request: the leased deliveries (each with its receipt
// handle), none when nothing became available within the wait, or for a
// replay the one record (domain.ErrOffsetNotWritten past the high
// watermark). With Deps.Peers set (and req.LocalOnly clear) a pinned read,
// a replay or a pinned batch of another node's partition goes to its owner,
// and a queue or batch consume probes the other owners (route.go).
// Errors: domain.ErrTopicNotFound, domain.ErrPartitionOutOfRange,
// domain.ErrInvalidArgument, domain.ErrNotOwner (another node's partition
// without Peers, or moved mid-request), domain.ErrOwnerDown (its owner is
// marked dead), domain.ErrOwnerNoAnswer (the forward got no answer),
// domain.ErrTooManyConsumes, domain.ErrLogClosed (transient), the replay
// errors of Replay, the owner's refusals, ctx.Err().
func (s *Service) Consume(ctx context.Context, req Request) ([]domain.Delivery, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if req.Claim && req.LocalOnly {
		s.tokens.retire(req.Topic) // the moment it arrives (story F41)
	}
	if req.Mode == ModeBatch && (req.Max < 1 || req.Max > BatchMaxMessages) {
		return nil, domain.Refuse(domain.ErrInvalidArgument, fmt.Sprintf("invalid max: want an integer from 1 to %d", BatchMaxMessages))
	}
	done, err := s.admission.admit(req.Identity, req.max())
	if err != nil {
		return nil, err
	}
	defer done()
	forward := s.peers != nil && !req.LocalOnly
	if req.Mode == ModeReplay {
		d, err := s.replay(ctx, req, forward)
		if err != nil {
			return nil, err
		}
		return []domain.Delivery{d}, nil
	}
	t, err := s.topic(req.Topic)
	if err != nil {
		return nil, err
	}
	sc, owner, err := s.checkPinned(t, req.scope(), forward)
	if err != nil {
		return nil, err
	}
	if owner != "" {
		return s.forwardConsume(ctx, owner, remoteRequest(req))
	}
	return s.lease(ctx, t, sc, req, forward && !sc.pinned)
}

// checkPinned refuses a partition out of range, and marks a local one
// verified for the first pass. Another node's partition is refused
// domain.ErrNotOwner, or with forward set named as owner once its owner is
// known alive (domain.ErrOwnerDown when marked dead).
func (s *Service) checkPinned(t meta.Topic, sc scope, forward bool) (_ scope, owner string, _ error) {
	if !sc.pinned {
		return sc, "", nil
	}
	if sc.partition < 0 || sc.partition >= t.Partitions {
		return sc, "", domain.ErrPartitionOutOfRange
	}
	where, node, err := s.placementOf(t, sc.partition)
	switch {
	case err != nil:
		return sc, "", err
	case where == remote && !forward:
		return sc, "", fmt.Errorf("consume: %s/%d: %w", t.Name, sc.partition, domain.ErrNotOwner)
	case where == remote:
		return sc, node, s.checkOwnerAlive(t, sc.partition, node)
	}
	sc.verified = where == local
	return sc, "", nil
}

// lease runs the queue, pinned and batch modes: one non-blocking pass; if
// it found nothing, a long poll for one record topped up by a second pass.
// routed adds the other owners (internals.md §5.5): they are probed after
// the local pass and again while waiting (waitRouted).
func (s *Service) lease(ctx context.Context, t meta.Topic, sc scope, req Request, routed bool) ([]domain.Delivery, error) {
	start := s.clock.Now()
	max := req.max()
	ds, err := s.pass(ctx, t, sc, max, batchScanBytesMax)
	if err != nil {
		return nil, err
	}
	sc.verified = false        // ownership may change while waiting: look again
	outcome, from := "hit", "" // from: the owner that served ds when not this node
	if len(ds) == 0 {
		if ds, from, err = s.waitAny(ctx, t, sc, req, routed); err != nil {
			s.metrics.ConsumeWaited(t.Name, "cancelled", s.clock.Now().Sub(start))
			return nil, err
		}
		outcome = emptyOutcome(ds, req.Wait)
		if len(ds) > 0 && from == "" && max > 1 {
			ds = s.topUp(ctx, t, sc, ds, max)
		}
	}
	if from != "" {
		s.metrics.ConsumeWaited(t.Name, outcome, s.clock.Now().Sub(start))
		return ds, nil // counted, trimmed and released (if cancelled) by its owner
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

// waitAny finds one record after an empty pass: on this node only, a long
// poll (none without a wait); routed, the other owners too (waitRouted).
func (s *Service) waitAny(ctx context.Context, t meta.Topic, sc scope, req Request, routed bool) ([]domain.Delivery, string, error) {
	if routed {
		return s.waitRouted(ctx, t, sc, req)
	}
	if req.Wait <= 0 {
		return nil, "", nil
	}
	ds, err := s.waitForOne(ctx, t, sc, req.Wait)
	return ds, "", err
}

// emptyOutcome names a consume's outcome for the wait metric.
func emptyOutcome(ds []domain.Delivery, wait time.Duration) string {
	switch {
	case len(ds) > 0:
		return "hit"
	case wait <= 0:
		return "no_wait"
	}
	return "timeout"
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

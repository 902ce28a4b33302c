package consume

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/lease"
	"github.com/narad/narad/domain/meta"
)

// Op is what a settle request does to a lease (api.md §2.15).
type Op int

const (
	// OpAck settles the message for good.
	OpAck Op = iota
	// OpExtend renews the lease for a full visibility timeout from now.
	OpExtend
	// OpNack releases the lease for redelivery with a new handle: at once,
	// or after the topic's redelivery backoff when it has one.
	OpNack
)

// Ack settles the leased message h names. Acks are always accepted, ahead
// of the frontier too (api.md §5.7). Errors: domain.ErrTopicNotFound,
// domain.ErrLeaseGone (410: lapsed, settled, superseded, another topic's
// handle or a partition the topic does not have), domain.ErrNotOwner.
func (s *Service) Ack(ctx context.Context, topic string, h domain.ReceiptHandle) error {
	return s.Settle(ctx, topic, h, OpAck)
}

// Extend renews h's lease to now + the topic's visibility timeout; the
// handle stays valid. Errors as Ack.
func (s *Service) Extend(ctx context.Context, topic string, h domain.ReceiptHandle) error {
	return s.Settle(ctx, topic, h, OpExtend)
}

// Nack releases h's lease: the handle is dead, and the message is
// available again at once, or on a topic with a redelivery backoff after
// the backoff's wait for its delivery count. Errors as Ack.
func (s *Service) Nack(ctx context.Context, topic string, h domain.ReceiptHandle) error {
	return s.Settle(ctx, topic, h, OpNack)
}

// NackAfter releases h's lease like Nack but keeps the message out of
// delivery for delay (at most NackDelayMax, else domain.ErrInvalidArgument);
// the handle is dead at once and the redelivery carries a new one. A delay
// of 0 is a Nack. The delay is held like a lease, in the owner's memory:
// a restart or a move of the partition ends it early, as it ends every
// lease. Errors as Settle, and for another node's partition a
// domain.ErrPrecondition refusal when its owner runs a release that cannot
// delay a nack (nothing applied; the lease stands).
func (s *Service) NackAfter(ctx context.Context, topic string, h domain.ReceiptHandle, delay time.Duration) error {
	if err := checkNackDelay(delay); err != nil {
		return err
	}
	return s.settleRouted(ctx, topic, h, OpNack, delay, s.peers != nil)
}

// NackBatchAfter is NackAfter for every handle of a batch, answered as
// AckBatch answers.
func (s *Service) NackBatchAfter(ctx context.Context, topic string, hs []domain.ReceiptHandle, delay time.Duration) ([]error, error) {
	if err := checkNackDelay(delay); err != nil {
		return nil, err
	}
	return s.ackBatch(ctx, topic, hs, OpNack, delay, s.peers != nil)
}

func checkNackDelay(delay time.Duration) error {
	if delay < 0 || delay > NackDelayMax {
		return fmt.Errorf("consume: nack delay %v: want 0 to %v: %w", delay, NackDelayMax, domain.ErrInvalidArgument)
	}
	return nil
}

// Settle applies op to h's lease. With Deps.Peers set, a handle of another
// node's partition is settled on its owner: domain.ErrOwnerDown when the
// owner is marked dead, domain.ErrOwnerNotReached when the forward never
// left this node (nothing applied), domain.ErrOwnerNoAnswer when it got no
// answer (the op may have been applied).
func (s *Service) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op Op) error {
	return s.settleRouted(ctx, topic, h, op, 0, s.peers != nil)
}

// AckBatch applies op to every handle independently and answers one error
// (nil for success) per handle, in order. The whole request fails only when
// the topic does not exist (domain.ErrTopicNotFound). With Deps.Peers set,
// handles of other nodes' partitions are grouped per owner, each group one
// forward, the groups in parallel (internals.md §5.9).
func (s *Service) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op) ([]error, error) {
	return s.ackBatch(ctx, topic, hs, op, 0, s.peers != nil)
}

// settleRouted applies op to h, here or on its owner; delay is a nack's
// (0 for every other op).
func (s *Service) settleRouted(ctx context.Context, topic string, h domain.ReceiptHandle, op Op, delay time.Duration, forward bool) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	t, err := s.topic(topic)
	if err != nil {
		return err
	}
	sh, owner, err := s.leaseShard(t, h.Partition, forward)
	switch {
	case err != nil:
		return err
	case owner != "":
		return s.settleOnOwner(ctx, owner, t.Name, []domain.ReceiptHandle{h}, op, delay)[0]
	}
	return s.settleOn(sh, t, h, op, delay)
}

func (s *Service) ackBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op, delay time.Duration, forward bool) ([]error, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	t, err := s.topic(topic)
	if err != nil {
		return nil, err
	}
	out := make([]error, len(hs))
	remoteAt := make([]bool, len(hs)) // answered by groupRemote or its forwards
	var groups map[string][]int       // live remote owner -> indexes of its handles
	if forward {
		if groups, err = s.groupRemote(t, hs, out, remoteAt); err != nil {
			return nil, err
		}
	}
	type found struct {
		sh  *shard
		err error
	}
	shards := make(map[int32]found, 8) // each partition's shard, found once per request
	for i, h := range hs {
		if remoteAt[i] {
			continue
		}
		f, ok := shards[h.Partition]
		if !ok {
			f.sh, _, f.err = s.leaseShard(t, h.Partition, false)
			shards[h.Partition] = f
		}
		if out[i] = f.err; f.err == nil {
			out[i] = s.settleOn(f.sh, t, h, op, delay)
		}
	}
	s.settleGroups(ctx, t.Name, hs, op, delay, groups, out)
	return out, nil
}

// settleOn applies op to h's lease on sh, the shard of h's partition; a
// nack with a delay defers the offset instead of freeing it, and so does a
// plain nack on a topic with a redelivery backoff (for the backoff's wait).
func (s *Service) settleOn(sh *shard, t meta.Topic, h domain.ReceiptHandle, op Op, delay time.Duration) error {
	var err error
	freed := false // a nack made the offset deliverable at once
	sh.mu.Lock()
	if sh.gone {
		sh.mu.Unlock()
		return fmt.Errorf("consume: %s: %w", sh.ref, domain.ErrLeaseGone)
	}
	now := s.nowMs()
	switch op {
	case OpAck:
		if err = sh.l.Ack(h.Offset, h.Nonce, now); err == nil {
			s.committer.markDirty(sh)
		}
	case OpExtend:
		_, err = sh.l.Extend(h.Offset, h.Nonce, now, visibilityOf(t))
	case OpNack:
		if delay.Milliseconds() > 0 {
			err = sh.l.Defer(h.Offset, h.Nonce, now, delay.Milliseconds())
			break
		}
		sh.l.SetBackoff(backoffOf(t)) // the topic's policy as of this nack
		err = sh.l.Release(h.Offset, h.Nonce, now)
		freed = sh.l.Backoff() == (lease.Backoff{})
	}
	sh.mu.Unlock()
	if err != nil {
		return fmt.Errorf("consume: %s: %w", sh.ref, err)
	}
	switch op {
	case OpExtend:
		s.metrics.LeaseSettled(t.Name, "extend")
	case OpNack:
		s.metrics.LeaseSettled(t.Name, "nack")
		if freed {
			s.pump.wake(t.Name) // a deferred one comes back through the purger
		}
	default:
		s.pump.wake(t.Name) // a freed in-flight slot or an advanced frontier
	}
	return nil
}

// leaseShard finds the shard that may hold a lease on partition p of t: a
// partition the topic does not have, or one no node served here, holds
// none (410). Another node's partition is not ours to settle
// (domain.ErrNotOwner), or with forward set its live owner is named
// (domain.ErrOwnerDown when it is marked dead).
func (s *Service) leaseShard(t meta.Topic, p int32, forward bool) (_ *shard, owner string, _ error) {
	gone := func() error { return fmt.Errorf("consume: %s/%d: %w", t.Name, p, domain.ErrLeaseGone) }
	if p < 0 || p >= t.Partitions {
		return nil, "", gone()
	}
	where, node, err := s.placementOf(t, p)
	switch {
	case err != nil:
		return nil, "", err
	case where == remote && forward:
		return nil, node, s.checkOwnerAlive(t, p, node)
	case where == remote:
		return nil, "", fmt.Errorf("consume: %s/%d: %w", t.Name, p, domain.ErrNotOwner)
	case where == unassigned:
		return nil, "", gone()
	}
	sh := s.existing(refOf(t, p))
	if sh == nil {
		return nil, "", gone()
	}
	return sh, "", nil
}

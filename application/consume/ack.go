package consume

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
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

// NackOptions is what a nack may carry besides its handles (the zero
// value is a plain Nack).
type NackOptions struct {
	// Delay keeps the message out of delivery that long, at most
	// NackDelayMax; 0 (or under a millisecond) releases it at once. The
	// delay is held like a lease, in the owner's memory: a restart or a
	// move of the partition ends it early, as it ends every lease.
	Delay time.Duration
	// Reason is kept as the message's last nack reason on a topic with a
	// dead-letter policy and written into its dead letter; "" keeps the
	// reason before it. At most deadletter.ReasonBytesMax bytes of UTF-8.
	// A topic without a policy ignores it.
	Reason string
}

// NackWith releases h's lease like Nack, with opts' delay and reason; the
// handle is dead at once and the redelivery carries a new one. Errors as
// Settle, domain.ErrInvalidArgument for a delay or reason out of bounds,
// and for another node's partition a domain.ErrPrecondition refusal when
// its owner runs a release that cannot delay a nack or keep its reason
// (nothing applied; the lease stands).
func (s *Service) NackWith(ctx context.Context, topic string, h domain.ReceiptHandle, opts NackOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	return s.settleRouted(ctx, topic, h, OpNack, opts, s.peers != nil)
}

// NackBatchWith is NackWith for every handle of a batch, answered as
// AckBatch answers.
func (s *Service) NackBatchWith(ctx context.Context, topic string, hs []domain.ReceiptHandle, opts NackOptions) ([]error, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	return s.ackBatch(ctx, topic, hs, OpNack, opts, s.peers != nil)
}

// check refuses a delay or a reason out of bounds.
func (o NackOptions) check() error {
	if o.Delay < 0 || o.Delay > NackDelayMax {
		return fmt.Errorf("consume: nack delay %v: want 0 to %v: %w", o.Delay, NackDelayMax, domain.ErrInvalidArgument)
	}
	if len(o.Reason) > deadletter.ReasonBytesMax || !utf8.ValidString(o.Reason) {
		return fmt.Errorf("consume: nack reason of %d bytes: want at most %d bytes of UTF-8: %w",
			len(o.Reason), deadletter.ReasonBytesMax, domain.ErrInvalidArgument)
	}
	return nil
}

// remote reports whether a nack with o must go to another node's owner as
// a NackRemote rather than a plain settle.
func (o NackOptions) remote() bool { return o.Delay > 0 || o.Reason != "" }

// Settle applies op to h's lease. With Deps.Peers set, a handle of another
// node's partition is settled on its owner: domain.ErrOwnerDown when the
// owner is marked dead, domain.ErrOwnerNotReached when the forward never
// left this node (nothing applied), domain.ErrOwnerNoAnswer when it got no
// answer (the op may have been applied).
func (s *Service) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op Op) error {
	return s.settleRouted(ctx, topic, h, op, NackOptions{}, s.peers != nil)
}

// AckBatch applies op to every handle independently and answers one error
// (nil for success) per handle, in order. The whole request fails only when
// the topic does not exist (domain.ErrTopicNotFound). With Deps.Peers set,
// handles of other nodes' partitions are grouped per owner, each group one
// forward, the groups in parallel (internals.md §5.9).
func (s *Service) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op) ([]error, error) {
	return s.ackBatch(ctx, topic, hs, op, NackOptions{}, s.peers != nil)
}

// settleRouted applies op to h, here or on its owner; nack is a nack's
// options (zero for every other op).
func (s *Service) settleRouted(ctx context.Context, topic string, h domain.ReceiptHandle, op Op, nack NackOptions, forward bool) error {
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
		return s.settleOnOwner(ctx, owner, t.Name, []domain.ReceiptHandle{h}, op, nack)[0]
	}
	return s.settleHere(sh, t, h, op, nack)
}

func (s *Service) ackBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op, nack NackOptions, forward bool) ([]error, error) {
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
			out[i] = s.settleHere(f.sh, t, h, op, nack)
		}
	}
	s.settleGroups(ctx, t.Name, hs, op, nack, groups, out)
	return out, nil
}

// settleHere applies op to h's lease on sh, the shard of h's partition
// (settleOn); a nack's reason is kept on a topic with a dead-letter policy
// (nackWithReason) and ignored on any other.
func (s *Service) settleHere(sh *shard, t meta.Topic, h domain.ReceiptHandle, op Op, nack NackOptions) error {
	if op == OpNack && nack.Reason != "" && s.maxReceivesOf(t) > 0 {
		return s.nackWithReason(sh, t, h, nack)
	}
	return s.settleOn(sh, t, h, op, nack.Delay)
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

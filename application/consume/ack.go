package consume

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Op is what a settle request does to a lease (api.md §2.15).
type Op int

const (
	// OpAck settles the message for good.
	OpAck Op = iota
	// OpExtend renews the lease for a full visibility timeout from now.
	OpExtend
	// OpNack releases the lease at once for redelivery with a new handle.
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

// Nack releases h's lease: the message is available again at once and the
// handle is dead. Errors as Ack.
func (s *Service) Nack(ctx context.Context, topic string, h domain.ReceiptHandle) error {
	return s.Settle(ctx, topic, h, OpNack)
}

// Settle applies op to h's lease. With Deps.Peers set, a handle of another
// node's partition is settled on its owner: domain.ErrOwnerDown when the
// owner is marked dead, domain.ErrOwnerNotReached when the forward never
// left this node (nothing applied), domain.ErrOwnerNoAnswer when it got no
// answer (the op may have been applied).
func (s *Service) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op Op) error {
	return s.settleRouted(ctx, topic, h, op, s.peers != nil)
}

// AckBatch applies op to every handle independently and answers one error
// (nil for success) per handle, in order. The whole request fails only when
// the topic does not exist (domain.ErrTopicNotFound). With Deps.Peers set,
// handles of other nodes' partitions are grouped per owner, each group one
// forward, the groups in parallel (internals.md §5.9).
func (s *Service) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op) ([]error, error) {
	return s.ackBatch(ctx, topic, hs, op, s.peers != nil)
}

func (s *Service) settleRouted(ctx context.Context, topic string, h domain.ReceiptHandle, op Op, forward bool) error {
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
		return s.settleOnOwner(ctx, owner, t.Name, []domain.ReceiptHandle{h}, op)[0]
	}
	return s.settleOn(sh, t, h, op)
}

func (s *Service) ackBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op, forward bool) ([]error, error) {
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
			out[i] = s.settleOn(f.sh, t, h, op)
		}
	}
	s.settleGroups(ctx, t.Name, hs, op, groups, out)
	return out, nil
}

// settleOn applies op to h's lease on sh, the shard of h's partition.
func (s *Service) settleOn(sh *shard, t meta.Topic, h domain.ReceiptHandle, op Op) error {
	var err error
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
	default:
		err = sh.l.Release(h.Offset, h.Nonce, now)
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
		s.pump.wake(t.Name)
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

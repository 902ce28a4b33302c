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

// Settle applies op to h's lease.
func (s *Service) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op Op) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	t, err := s.topic(topic)
	if err != nil {
		return err
	}
	return s.settle(ctx, t, h, op)
}

// AckBatch applies op to every handle independently and answers one error
// (nil for success) per handle, in order. The whole request fails only when
// the topic does not exist (domain.ErrTopicNotFound).
func (s *Service) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op) ([]error, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	t, err := s.topic(topic)
	if err != nil {
		return nil, err
	}
	type found struct {
		sh  *shard
		err error
	}
	shards := make(map[int32]found, 8) // each partition's shard, found once per request
	out := make([]error, len(hs))
	for i, h := range hs {
		f, ok := shards[h.Partition]
		if !ok {
			f.sh, f.err = s.leaseShard(t, h.Partition)
			shards[h.Partition] = f
		}
		if out[i] = f.err; f.err == nil {
			out[i] = s.settleOn(f.sh, t, h, op)
		}
	}
	return out, nil
}

func (s *Service) settle(_ context.Context, t meta.Topic, h domain.ReceiptHandle, op Op) error {
	sh, err := s.leaseShard(t, h.Partition)
	if err != nil {
		return err
	}
	return s.settleOn(sh, t, h, op)
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
// none (410); another node's partition is not ours to settle.
func (s *Service) leaseShard(t meta.Topic, p int32) (*shard, error) {
	gone := func() error { return fmt.Errorf("consume: %s/%d: %w", t.Name, p, domain.ErrLeaseGone) }
	if p < 0 || p >= t.Partitions {
		return nil, gone()
	}
	where, err := s.placementOf(t, p)
	switch {
	case err != nil:
		return nil, err
	case where == remote:
		return nil, fmt.Errorf("consume: %s/%d: %w", t.Name, p, domain.ErrNotOwner)
	case where == unassigned:
		return nil, gone()
	}
	sh := s.existing(refOf(t, p))
	if sh == nil {
		return nil, gone()
	}
	return sh, nil
}

package consume

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

var _ ports.ConsumerFrontiers = (*Service)(nil)

// Unconsumed returns, for each partition in parts of topic's incarnation id
// (empty: the live one), the first offset its consumers have not settled:
// the committed frontier + 1, 0 when nothing was ever settled (api.md
// §2.10.2 `from: unconsumed`, internals.md §7.1). Offsets acked ahead of the
// frontier do not count. A partition touched since start answers its
// in-memory frontier (newer than the persisted one by up to the durability
// interval); any other answers the persisted one, read without creating its
// shard. Like the Owner it serves this node's partitions only and never
// forwards. It refuses the whole request on the first error:
// domain.ErrTopicNotFound (absent here, or id is not the incarnation held),
// domain.ErrPartitionOutOfRange, domain.ErrNotOwner, domain.ErrUnavailable
// (the replica or the persisted progress cannot be read), domain.ErrClosed,
// ctx.Err() (ports.ConsumerFrontiers).
func (s *Service) Unconsumed(ctx context.Context, topic string, id domain.TopicID, parts []int32) ([]int64, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := s.frontierTopic(topic, id)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(parts))
	for i, p := range parts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.checkFrontierOwner(t, p); err != nil {
			return nil, err
		}
		committed, err := s.committedFrontier(refOf(t, p))
		if err != nil {
			return nil, err
		}
		out[i] = committed + 1
	}
	return out, nil
}

// frontierTopic reads topic from the local replica and checks that id, when
// given, is the incarnation it holds.
func (s *Service) frontierTopic(topic string, id domain.TopicID) (meta.Topic, error) {
	t, ok, err := s.topics.Topic(topic)
	switch {
	case err != nil:
		return meta.Topic{}, fmt.Errorf("consume: read topic %q: %w: %w", topic, domain.ErrUnavailable, err)
	case !ok:
		return meta.Topic{}, fmt.Errorf("consume: topic %q absent on %s: %w", topic, s.self, domain.ErrTopicNotFound)
	case id != "" && string(id) != t.ID:
		return meta.Topic{}, fmt.Errorf("consume: %s holds incarnation %q of %q, asked for %q: %w",
			s.self, t.ID, topic, id, domain.ErrTopicNotFound)
	}
	return t, nil
}

// checkFrontierOwner refuses a partition outside t, or one this node's
// replica does not assign to it for t's incarnation.
func (s *Service) checkFrontierOwner(t meta.Topic, p int32) error {
	if p < 0 || p >= t.Partitions {
		return fmt.Errorf("consume: %s/%d of %d partitions: %w", t.Name, p, t.Partitions, domain.ErrPartitionOutOfRange)
	}
	where, _, err := s.placementOf(t, p)
	switch {
	case err != nil:
		return fmt.Errorf("consume: frontier of %s/%d: %w: %w", t.Name, p, domain.ErrUnavailable, err)
	case where != local:
		return fmt.Errorf("consume: %s/%d is not owned by %s: %w", t.Name, p, s.self, domain.ErrNotOwner)
	}
	return nil
}

// committedFrontier is ref's frontier: the live shard's when ref has one,
// else the persisted one.
func (s *Service) committedFrontier(ref domain.PartitionRef) (int64, error) {
	if sh := s.existing(ref); sh != nil {
		sh.mu.Lock()
		gone, committed := sh.gone, int64(0)
		if !gone {
			committed = sh.l.Committed()
		}
		sh.mu.Unlock()
		if !gone {
			return committed, nil
		}
	}
	o, err := s.committer.store.Load(ref)
	if err != nil {
		return 0, fmt.Errorf("consume: load the frontier of %s: %w: %w", ref, domain.ErrUnavailable, err)
	}
	return o.Committed, nil
}

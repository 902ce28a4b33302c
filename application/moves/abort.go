package moves

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Store is what an abort reads and writes.
type Store interface {
	Assignment(topic string, partition int32) (a meta.Assignment, ok bool, err error)
	ports.MetadataProposer
}

// Aborter clears move targets. Safe for concurrent use.
type Aborter struct {
	store Store
	clock ports.Clock
}

// NewAborter returns an Aborter; it panics on a nil dependency.
func NewAborter(store Store, clock ports.Clock) *Aborter {
	if store == nil || clock == nil {
		panic("moves: aborter needs a store and a clock")
	}
	return &Aborter{store: store, clock: clock}
}

// Abort clears the move target of topic's partition: the owner keeps the
// partition. With target set, only a move to that node is cleared. It
// returns the move as it stood. Errors: domain.ErrNoAssignment, domain.ErrNoMove (nothing in flight, another target, or the
// move finished meanwhile: 409), domain.ErrUnavailable (no leader, or the
// outcome could not be read back), a store error.
func (a *Aborter) Abort(ctx context.Context, actor, topic string, partition int32, target string) (meta.Move, error) {
	row, err := a.row(topic, partition)
	if err != nil {
		return meta.Move{}, err
	}
	if row.Target == "" {
		return meta.Move{}, domain.Refuse(domain.ErrNoMove, fmt.Sprintf("%s/%d has no move in flight", topic, partition))
	}
	if target != "" && row.Target != target {
		return meta.Move{}, domain.Refuse(domain.ErrNoMove, fmt.Sprintf("the move of %s/%d targets %s, not %s", topic, partition, row.Target, target))
	}
	mv := meta.Move{Topic: topic, TopicID: row.TopicID, Partition: partition, From: row.Owner, To: row.Target}
	ev := &meta.AbortMove{Topic: topic, TopicID: row.TopicID, Partition: partition, ExpectedTarget: row.Target}
	applied, err := a.store.Propose(ctx, meta.Envelope{Actor: actor, AtMs: a.clock.Now().UnixMilli(), Event: ev})
	if err != nil {
		if errors.Is(err, meta.ErrInvalidEvent) || errors.Is(err, meta.ErrTypeHeldBack) {
			return meta.Move{}, fmt.Errorf("moves: abort proposal refused: %w", err)
		}
		return meta.Move{}, domain.Refuse(domain.ErrUnavailable, "the abort's outcome is unknown; read the moves back: "+err.Error())
	}
	if applied.Result.Code == meta.CodeNotFound {
		return meta.Move{}, domain.Refuse(domain.ErrNoAssignment, fmt.Sprintf("%s/%d has no assignment", topic, partition))
	}
	return mv, a.readBack(mv, applied.Result)
}

// readBack confirms from the local replica (which applied the entry) that
// the partition still has its owner and no target.
func (a *Aborter) readBack(mv meta.Move, res meta.Result) error {
	now, ok, err := a.store.Assignment(mv.Topic, mv.Partition)
	switch {
	case err != nil:
		return domain.Refuse(domain.ErrUnavailable, "the abort's outcome could not be read back: "+err.Error())
	case !ok:
		return domain.Refuse(domain.ErrNoAssignment, fmt.Sprintf("%s/%d has no assignment", mv.Topic, mv.Partition))
	case res.OK() && now.Target == "" && now.Owner == mv.From:
		return nil
	case now.Owner == mv.To:
		return domain.Refuse(domain.ErrNoMove, fmt.Sprintf("the move of %s/%d to %s finished before the abort", mv.Topic, mv.Partition, mv.To))
	case now.Target != "":
		return domain.Refuse(domain.ErrNoMove, fmt.Sprintf("%s/%d is still moving, now to %s", mv.Topic, mv.Partition, now.Target))
	}
	return domain.Refuse(domain.ErrNoMove, fmt.Sprintf("%s/%d has no move in flight", mv.Topic, mv.Partition))
}

func (a *Aborter) row(topic string, partition int32) (meta.Assignment, error) {
	row, ok, err := a.store.Assignment(topic, partition)
	switch {
	case err != nil:
		if errors.Is(err, meta.ErrStopped) || errors.Is(err, meta.ErrNotCaughtUp) || errors.Is(err, meta.ErrUnavailable) {
			return meta.Assignment{}, domain.Refuse(domain.ErrUnavailable, "metadata unavailable on this node: "+err.Error())
		}
		return meta.Assignment{}, fmt.Errorf("moves: read assignment: %w", err)
	case !ok:
		return meta.Assignment{}, domain.Refuse(domain.ErrNoAssignment, fmt.Sprintf("%s/%d has no assignment", topic, partition))
	}
	return row, nil
}

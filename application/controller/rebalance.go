package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/rebalance"
)

// rebalance clears the moves that can no longer finish and starts the ones
// the planner chooses (internals.md §11.2): a move whose destination is no
// member, is draining or has been dead for 2 minutes is aborted (the
// partition never left its owner), then rebalance.Plan tops the moves in flight up to the bound,
// each proposed as the partition's target for its destination's runner.
// Nothing happens with Deps.MaxInFlightMoves at 0.
func (c *Controller) rebalance(ctx context.Context) error {
	if c.maxMoves <= 0 {
		return nil
	}
	c.place.Lock()
	defer c.place.Unlock()
	now := c.clock.Now()
	if c.term.rebalanced.holds(now, c.store.Versions()) {
		return nil
	}
	memo := c.settle(now)
	c.term.rebalanced = settled{}
	members, err := c.store.Members()
	if err != nil {
		return fmt.Errorf("controller: rebalance: read members: %w", err)
	}
	topics, err := c.store.ListTopics("", 0)
	if err != nil {
		return fmt.Errorf("controller: rebalance: read topics: %w", err)
	}
	rows, err := c.store.AllAssignments()
	if err != nil {
		return fmt.Errorf("controller: rebalance: read assignments: %w", err)
	}
	errs := []error{c.abortStranded(ctx, members, rows)}
	if errs[0] != nil {
		return errs[0] // plan on what the aborts left, next pass
	}
	plan := rebalance.Plan(rebalance.State{Members: members, Topics: topics, Assignments: rows, MaxInFlight: c.maxMoves})
	if len(plan) == 0 && !anyMoving(rows) {
		c.term.rebalanced = memo // nothing to move and no move whose target may go stale
	}
	for _, mv := range plan {
		ev := &meta.SetAssignmentTarget{Topic: mv.Topic, TopicID: mv.TopicID, Partition: mv.Partition, Target: mv.To}
		applied, err := c.store.Propose(ctx, c.envelope(ev))
		if err == nil && !applied.Result.OK() {
			err = applied.Result.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("controller: move %s/%d to %s: %w", mv.Topic, mv.Partition, mv.To, err))
			continue
		}
		c.log.Info("controller: moving a partition", slog.String("topic", mv.Topic), slog.Int("partition", int(mv.Partition)),
			slog.String("from", mv.From), slog.String("to", mv.To))
	}
	return errors.Join(errs...)
}

// abortStranded clears the target of every move whose destination is no
// member, is draining, or has been dead (silent) for
// deadTargetAbortAfterDuration: the partition never left its owner, so
// this is always safe.
func (c *Controller) abortStranded(ctx context.Context, members []meta.Member, rows []meta.Assignment) error {
	byID := make(map[string]meta.Member, len(members))
	for _, m := range members {
		byID[m.ID] = m
	}
	now := c.clock.Now().Unix()
	var errs []error
	for _, a := range rows {
		if a.Target == "" {
			continue
		}
		m, ok := byID[a.Target]
		deadLong := ok && m.Status == meta.StatusDead && now-m.LastHeartbeat >= int64(deadTargetAbortAfterDuration.Seconds())
		if ok && !m.Draining && !deadLong {
			continue
		}
		ev := &meta.AbortMove{Topic: a.Topic, TopicID: a.TopicID, Partition: a.Partition, ExpectedTarget: a.Target}
		if _, err := c.store.Propose(ctx, c.envelope(ev)); err != nil {
			errs = append(errs, fmt.Errorf("controller: abort the move of %s/%d to %s: %w", a.Topic, a.Partition, a.Target, err))
			continue
		}
		c.log.Warn("controller: aborted a move whose destination cannot take it", slog.String("topic", a.Topic),
			slog.Int("partition", int(a.Partition)), slog.String("to", a.Target))
	}
	return errors.Join(errs...)
}

// anyMoving reports whether some partition has a move target: such a move
// may strand as time passes (abortStranded), whatever the views say.
func anyMoving(rows []meta.Assignment) bool {
	for _, r := range rows {
		if r.Target != "" {
			return true
		}
	}
	return false
}

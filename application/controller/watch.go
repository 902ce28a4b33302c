package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/domain/meta"
)

// CheckMembership is the leader's forming-cluster watch (internals §8.7),
// run every 250 ms: when a member turns alive it runs the assignment sweep
// outside the 10 s tick, once every voter is alive or 1 s after the latest
// arrival, behind a fresh barrier. It does nothing before the term's first
// pass, and ends the term when this node no longer leads.
func (c *Controller) CheckMembership(ctx context.Context) error {
	if !c.store.IsLeader() {
		c.endTerm()
		return ErrNotLeader
	}
	if c.term == nil || c.term.alive == nil {
		return nil
	}
	now := c.clock.Now()
	alive, err := c.aliveMembers()
	if err != nil {
		return err
	}
	for id := range alive {
		if !c.term.alive[id] {
			c.term.arrival, c.term.pending = now, true
		}
	}
	c.term.alive = alive
	if !c.term.pending {
		return nil
	}
	if now.Sub(c.term.arrival) < arrivalSettleDuration {
		settled, err := c.votersAlive(ctx, alive)
		if err != nil || !settled {
			return err
		}
	}
	return c.sweepNow(ctx)
}

// votersAlive reports whether every voter has an alive member record.
func (c *Controller) votersAlive(ctx context.Context, alive map[string]bool) (bool, error) {
	cfg, err := c.store.Membership(ctx)
	if err != nil {
		return false, fmt.Errorf("controller: watch: read the raft configuration: %w", err)
	}
	aliveReplicas := make(map[uint64]bool, len(alive))
	for id := range alive {
		aliveReplicas[meta.ReplicaID(id)] = true
	}
	for rid := range cfg.Voters {
		if !aliveReplicas[rid] {
			return false, nil
		}
	}
	return true, nil
}

// sweepNow runs the assignment sweep behind a barrier.
func (c *Controller) sweepNow(ctx context.Context) error {
	if err := c.confirmLeader(ctx); err != nil {
		if errors.Is(err, ErrNotLeader) {
			return err
		}
		return fmt.Errorf("controller: watch: %w", err)
	}
	if err := c.sweep(ctx); err != nil {
		return err
	}
	c.term.pending, c.term.arrival = false, time.Time{}
	return nil
}

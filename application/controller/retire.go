package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/domain/rebalance"
)

// retire removes the draining members that own nothing and are the target
// of no move (internals.md §9.5): once the member's ingress WAL has handed
// every accepted record to its owner (NodeStatus, op 33), its Raft server
// goes (a voter only while at least three voters remain, and never while
// it leads: it hands the leadership on first and the next leader finishes),
// then its member record, leaving a tombstone. Each pass retries what is
// left; nothing happens without a way to ask members (Deps.Status).
func (c *Controller) retire(ctx context.Context) error {
	if c.status == nil {
		return nil
	}
	members, err := c.store.Members()
	if err != nil {
		return fmt.Errorf("controller: retire: read members: %w", err)
	}
	var draining []meta.Member
	for _, m := range members {
		if m.Draining {
			draining = append(draining, m)
		}
	}
	if len(draining) == 0 {
		return nil
	}
	rows, err := c.store.AllAssignments()
	if err != nil {
		return fmt.Errorf("controller: retire: read assignments: %w", err)
	}
	named := map[string]bool{}
	for _, a := range rows {
		named[a.Owner] = true
		if a.Target != "" {
			named[a.Target] = true
		}
	}
	var errs []error
	for _, m := range draining {
		if !named[m.ID] {
			errs = append(errs, c.retireOne(ctx, m, members))
		}
	}
	return errors.Join(errs...)
}

// retireOne takes one empty draining member out of the cluster, or does
// the step that must come first.
func (c *Controller) retireOne(ctx context.Context, m meta.Member, members []meta.Member) error {
	cfg, err := c.store.Membership(ctx)
	if err != nil {
		return fmt.Errorf("controller: retire %s: raft configuration: %w", m.ID, err)
	}
	rid := meta.ReplicaID(m.ID)
	_, voter := cfg.Voters[rid]
	_, nonVoter := cfg.NonVoters[rid]
	if voter && len(cfg.Voters)-1 < rebalance.MinVoters {
		c.log.Debug("controller: a drained voter stays: fewer than three voters would remain", slog.String("member", m.ID))
		return nil
	}
	if voter && m.ID == c.self {
		return c.handOff(ctx, members, cfg.Voters)
	}
	if voter || nonVoter {
		sctx, cancel := context.WithTimeout(ctx, retireStatusTimeout)
		st, err := c.status.NodeStatus(sctx, m.ID)
		cancel()
		if err != nil {
			return fmt.Errorf("controller: retire %s: node status: %w", m.ID, err)
		}
		if st.DispatchBacklog > 0 {
			c.log.Info("controller: a drained member still hands accepted records to their owners",
				slog.String("member", m.ID), slog.Uint64("dispatch_backlog", st.DispatchBacklog))
			return nil
		}
		if err := c.store.RemoveReplica(ctx, rid); err != nil {
			return fmt.Errorf("controller: retire %s: remove the raft server: %w", m.ID, err)
		}
	}
	applied, err := c.store.Propose(ctx, c.envelope(&meta.RemoveMember{ID: m.ID}))
	if err != nil {
		return fmt.Errorf("controller: retire %s: remove the member: %w", m.ID, err)
	}
	if !applied.Result.OK() && applied.Result.Code != meta.CodeNotFound {
		return fmt.Errorf("controller: retire %s: %w", m.ID, applied.Result.Err())
	}
	c.log.Info("controller: decommissioned member removed from the cluster", slog.String("member", m.ID))
	return nil
}

// handOff hands the leadership to an alive voter that is not draining, so
// the next leader removes this node.
func (c *Controller) handOff(ctx context.Context, members []meta.Member, voters map[uint64]string) error {
	if c.transfer == nil {
		return nil
	}
	for _, m := range members {
		if _, ok := voters[meta.ReplicaID(m.ID)]; !ok || m.ID == c.self || m.Draining || m.Status != meta.StatusAlive {
			continue
		}
		c.log.Info("controller: this drained node leads: handing the leadership on", slog.String("to", m.ID))
		if err := c.transfer.TransferLeadership(ctx, meta.ReplicaID(m.ID)); err != nil {
			return fmt.Errorf("controller: retire %s: hand the leadership to %s: %w", c.self, m.ID, err)
		}
		return nil
	}
	c.log.Warn("controller: this drained node leads and no other alive voter can take over")
	return nil
}

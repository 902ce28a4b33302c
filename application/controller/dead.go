package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/narad/narad/domain/meta"
)

// markDead marks dead every alive member silent for longer than 30 s
// (internals §8.7, §9.4, story F23), but only once this term has run for
// 30 s by the monotonic clock, so a leader elected after a leaderless
// stretch first hears the heartbeats that stretch held back. Each mark
// carries the heartbeat it judged (type 31): a newer heartbeat on record
// refuses it. The breaker refuses every voter of a verdict that would leave
// fewer than a quorum of voters alive, the leader counted. Callers have
// passed a barrier.
func (c *Controller) markDead(ctx context.Context, now time.Time) error {
	if now.Sub(c.term.started) < memberDeadAfterDuration {
		return nil
	}
	members, err := c.store.Members()
	if err != nil {
		return fmt.Errorf("controller: dead marking: read members: %w", err)
	}
	verdict := c.silent(members, now)
	if len(verdict) == 0 {
		c.breakerClosed()
		return nil
	}
	cfg, err := c.store.Membership(ctx)
	if err != nil {
		// Without the voter set the breaker cannot judge: mark nobody.
		return fmt.Errorf("controller: dead marking: read the raft configuration: %w", err)
	}
	verdict = c.breaker(verdict, members, cfg.Voters)
	for _, m := range verdict {
		if err := c.proposeDead(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

// silent returns the alive members, this node excepted, whose last
// heartbeat is older than the dead timeout.
func (c *Controller) silent(members []meta.Member, now time.Time) []meta.Member {
	var out []meta.Member
	for _, m := range members {
		if m.Status != meta.StatusAlive || m.ID == c.self {
			continue
		}
		if now.Sub(time.Unix(m.LastHeartbeat, 0)) > memberDeadAfterDuration {
			out = append(out, m)
		}
	}
	return out
}

// breaker drops the voters from verdict when marking them would leave fewer
// than a quorum of voters alive (the leader counts as alive; a voter
// without an alive member record does not). Non-voters stay in the verdict.
// It sets the refusal flag and logs once per streak.
func (c *Controller) breaker(verdict, members []meta.Member, voters map[uint64]string) []meta.Member {
	judged := make(map[string]bool, len(verdict))
	for _, m := range verdict {
		judged[m.ID] = true
	}
	aliveRecord := make(map[uint64]bool, len(members))
	for _, m := range members {
		if m.Status == meta.StatusAlive && !judged[m.ID] {
			aliveRecord[meta.ReplicaID(m.ID)] = true
		}
	}
	self := meta.ReplicaID(c.self)
	aliveVoters, judgedVoters := 0, 0
	for rid := range voters {
		if rid == self || aliveRecord[rid] {
			aliveVoters++
		}
	}
	kept := verdict[:0:0]
	for _, m := range verdict {
		if _, voter := voters[meta.ReplicaID(m.ID)]; voter {
			judgedVoters++
			continue
		}
		kept = append(kept, m)
	}
	if judgedVoters == 0 || aliveVoters >= len(voters)/2+1 {
		c.breakerClosed()
		return verdict
	}
	c.refused.Store(true)
	if !c.term.refusing {
		c.term.refusing = true
		c.log.Warn("controller: dead marking refused: the verdict would leave fewer than a quorum of voters alive; suspecting this node's own node-RPC plane",
			slog.Int("voters", len(voters)), slog.Int("voters_alive_after", aliveVoters),
			slog.Int("voters_judged", judgedVoters))
	}
	return kept
}

// breakerClosed ends a refusal streak.
func (c *Controller) breakerClosed() {
	if c.term.refusing {
		c.log.Info("controller: dead marking no longer refused")
	}
	c.term.refusing = false
	c.refused.Store(false)
}

// proposeDead proposes one dead mark carrying the heartbeat judged.
func (c *Controller) proposeDead(ctx context.Context, m meta.Member) error {
	ev := &meta.MarkMemberDeadIf{ID: m.ID, Heartbeat: m.LastHeartbeat}
	applied, err := c.store.Propose(ctx, c.envelope(ev))
	if err != nil {
		return fmt.Errorf("controller: mark %q dead: %w", m.ID, err)
	}
	switch applied.Result.Code {
	case meta.CodeOK:
		c.log.Warn("controller: member marked dead", slog.String("member", m.ID),
			slog.Int64("last_heartbeat", m.LastHeartbeat))
	case meta.CodeConflict, meta.CodeNotFound:
		// A heartbeat arrived after the read, or the member left: fine.
	default:
		c.log.Warn("controller: dead mark refused", slog.String("member", m.ID),
			slog.Any("error", applied.Result.Err()))
	}
	return nil
}

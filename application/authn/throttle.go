package authn

import (
	"time"

	"github.com/narad/narad/ports"
)

// bucket is a token bucket refilled continuously from the clock.
type bucket struct {
	tokens  float64
	at      time.Time // when tokens was brought up to date
	auditAt time.Time // the last refusal audited
}

// refill adds what elapsed since the last refill, up to burst.
func (b *bucket) refill(now time.Time, burst float64, every time.Duration) {
	if elapsed := now.Sub(b.at); elapsed > 0 {
		b.tokens = min(burst, b.tokens+float64(elapsed)/float64(every))
		b.at = now
	}
}

// takeTokensLocked charges a check for username up front: one token of its
// bucket and, when that bucket is not full (recent failures), one of the
// node budget. clean reports a full bucket: such a check is never refused.
// A refusal may carry an audit line (at most one per throttleAuditInterval
// per user, and per node for the budget).
func (a *Authenticator) takeTokensLocked(username, remote string, now time.Time) (clean, tookBudget bool, ev *ports.AuditEvent, refused bool) {
	b := a.userBucketLocked(username, now)
	if b == nil {
		b = &bucket{tokens: failedBucketBurstTokens - 1, at: now}
		a.buckets[username] = b
		a.sweepLocked(now)
		return true, false, nil, false
	}
	if b.tokens < 1 {
		if now.Sub(b.auditAt) >= throttleAuditInterval {
			b.auditAt = now
			ev = throttledEvent(username, remote, "too many failed authentication attempts")
		}
		return false, false, ev, true
	}
	a.budget.refill(now, failureBudgetBurstTokens, failureBudgetRefillInterval)
	if a.budget.tokens < 1 {
		if now.Sub(a.budgetAt) >= throttleAuditInterval {
			a.budgetAt = now
			ev = throttledEvent(username, remote, "node failure budget exhausted")
		}
		return false, false, ev, true
	}
	a.budget.tokens--
	b.tokens--
	return false, true, nil, false
}

// userBucketLocked returns username's bucket brought up to date, or nil
// when it is full (no recent failures: a full bucket is not kept).
func (a *Authenticator) userBucketLocked(username string, now time.Time) *bucket {
	b := a.buckets[username]
	if b == nil {
		return nil
	}
	b.refill(now, failedBucketBurstTokens, failedBucketRefillInterval)
	if b.tokens >= failedBucketBurstTokens {
		delete(a.buckets, username)
		return nil
	}
	return b
}

// refundLocked gives back what f's check took: it succeeded, or never ran.
func (a *Authenticator) refundLocked(f *flight, now time.Time) {
	if b := a.userBucketLocked(f.key.username, now); b != nil {
		b.tokens++
		if b.tokens >= failedBucketBurstTokens {
			delete(a.buckets, f.key.username)
		}
	}
	if f.tookBudget {
		a.budget.refill(now, failureBudgetBurstTokens, failureBudgetRefillInterval)
		a.budget.tokens = min(failureBudgetBurstTokens, a.budget.tokens+1)
	}
}

// chargeFailureLocked is the budget's share of a failed first attempt (a
// clean check took none up front): one token when one is available.
func (a *Authenticator) chargeFailureLocked(f *flight, now time.Time) {
	if !f.clean {
		return
	}
	a.budget.refill(now, failureBudgetBurstTokens, failureBudgetRefillInterval)
	if a.budget.tokens >= 1 {
		a.budget.tokens--
	}
}

// sweepLocked drops the buckets that refilled, once their count reaches
// sweepAt; sweepAt then doubles past what is left, so sweeps stay rare.
func (a *Authenticator) sweepLocked(now time.Time) {
	if len(a.buckets) < a.sweepAt {
		return
	}
	for name := range a.buckets {
		a.userBucketLocked(name, now)
	}
	a.sweepAt = max(cachedUsersMax, 2*len(a.buckets))
}

func throttledEvent(username, remote, reason string) *ports.AuditEvent {
	return &ports.AuditEvent{Event: ports.AuditAuthThrottled, Actor: username, Subject: "user " + username,
		Outcome: ports.AuditRefused, Reason: reason, Remote: remote}
}

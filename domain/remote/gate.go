package remote

import "time"

// Gate is one remote's gate on one node (internals.md §7.2 "Gate",
// api.md §5.8 "Retry pacing"). It is open by default. A remote-wide failure
// (auth_failed, throttled, tls_failed) or GateTransientFailuresToClose
// unavailable answers in a row across the remote's lanes close it; while
// closed, one request per backoff goes through as the probe for every
// cursor, and the first accepted request or a new password opens it. The
// zero Gate is open. The caller serialises calls on one Gate.
type Gate struct {
	closed    bool
	reason    State         // the failure that closed it
	transient int           // unavailable answers in a row
	backoff   time.Duration // the current backoff step; 0 before the first
	next      time.Time     // when the next probe may go
	probing   bool          // a probe is out and has not reported
}

// Admit asks whether a request may go now. An open gate admits every
// request. A closed one admits a single probe once its time has come
// (probe is true) and nothing else until that probe's outcome is reported
// with Success or Failure (or Abandon). When ok is false, wait is how long
// until the probe's time; while a probe is out it is GateBackoffStart, a
// hint to look again.
func (g *Gate) Admit(now time.Time) (ok, probe bool, wait time.Duration) {
	switch {
	case !g.closed:
		return true, false, 0
	case g.probing:
		return false, false, GateBackoffStart
	case now.Before(g.next):
		return false, false, g.next.Sub(now)
	}
	g.probing = true
	return true, true, 0
}

// Success reports an accepted request: the gate opens, its backoff and
// its count of unavailable answers restart.
func (g *Gate) Success() { *g = Gate{} }

// CredentialChanged reports a new password (or another credential change)
// of the remote: the gate opens as after a success.
func (g *Gate) CredentialChanged() { *g = Gate{} }

// Backoff is the current backoff step: 0 while the gate is open
// (narad_remote_gate_backoff_seconds).
func (g *Gate) Backoff() time.Duration {
	if !g.closed {
		return 0
	}
	return g.backoff
}

// Abandon reports that the probe ended without an answer to classify (its
// cursor stopped): the next request may probe at once.
func (g *Gate) Abandon() { g.probing = false }

// Closed reports whether the gate is closed, and by which failure.
func (g *Gate) Closed() (closed bool, reason State) {
	if !g.closed {
		return false, Running
	}
	return true, g.reason
}

// Failure reports a request's failure, classified as kind (a Verdict's
// State), at now. retryAfter is a throttled answer's Retry-After (capped at
// GateRetryAfterMax; 0 = use the backoff); jitter in [0,1) draws the full
// jitter: the wait is jitter × the backoff step, which starts at
// GateBackoffStart and doubles to GateBackoffMax. auth_failed waits
// GateAuthFailedWait at once.
//
// While the gate is closed only the probe's outcome moves it; an answer to
// a request sent before it closed is ignored. Any answer but unavailable
// breaks a run of unavailable answers.
func (g *Gate) Failure(kind State, now time.Time, retryAfter time.Duration, jitter float64) {
	switch {
	case remoteWide(kind):
	case kind == Unavailable:
		g.transient++
		if !g.closed && g.transient < GateTransientFailuresToClose {
			return // only its lane backs off
		}
	default:
		g.transient = 0
		if !g.closed {
			return // a lane's own failure
		}
	}
	if g.closed && !g.probing {
		return
	}
	if remoteWide(kind) || kind == Unavailable {
		g.reason = kind // a probe refused otherwise keeps the reason
	}
	g.closed, g.probing = true, false
	g.next = now.Add(g.wait(kind, retryAfter, jitter))
}

// remoteWide reports the failures that concern the whole remote.
func remoteWide(kind State) bool {
	return kind == AuthFailed || kind == Throttled || kind == TLSFailed
}

// wait is how long the gate stays shut after a failure of kind, advancing
// the backoff when it is used.
func (g *Gate) wait(kind State, retryAfter time.Duration, jitter float64) time.Duration {
	switch {
	case kind == AuthFailed:
		g.backoff = GateBackoffMax
		return GateAuthFailedWait
	case kind == Throttled && retryAfter > 0:
		return min(retryAfter, GateRetryAfterMax)
	}
	g.backoff = nextStep(g.backoff, GateBackoffStart, GateBackoffMax)
	return fullJitter(g.backoff, jitter)
}

// LaneBackoff paces one lane after an isolated unavailable answer
// (internals.md §7.2 "Gate"): LaneBackoffStart doubling to LaneBackoffMax
// with full jitter, restarting after a success. The zero LaneBackoff is
// fresh.
type LaneBackoff struct {
	step time.Duration
}

// Failure advances the backoff and returns how long the lane waits: jitter
// in [0,1) × the step.
func (b *LaneBackoff) Failure(jitter float64) time.Duration {
	b.step = nextStep(b.step, LaneBackoffStart, LaneBackoffMax)
	return fullJitter(b.step, jitter)
}

// Success restarts the backoff.
func (b *LaneBackoff) Success() { b.step = 0 }

// nextStep is the backoff step after step: first, then doubling up to most.
func nextStep(step, first, most time.Duration) time.Duration {
	if step <= 0 {
		return first
	}
	return min(step*2, most)
}

// fullJitter is jitter × step, jitter clamped into [0,1].
func fullJitter(step time.Duration, jitter float64) time.Duration {
	switch {
	case !(jitter > 0): // NaN too
		return 0
	case jitter >= 1:
		return step
	}
	return time.Duration(float64(step) * jitter)
}

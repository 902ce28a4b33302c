package shipping

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/url"
	"time"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/remote"
	"github.com/narad/narad/ports"
)

// Ready returns once c's link may send: not paused, its remote present and
// readable, no stall to wait out, a target check not overdue, and the
// remote's gate open or its probe due. Until then it waits, re-reading the
// link every second, so a stopped link costs no reads of the parent.
func (s *Shipper) Ready(ctx context.Context, c fanout.RemoteCursor) error {
	cs := s.cursor(c)
	for {
		wait, err := s.readiness(ctx, c, cs)
		if err != nil || wait <= 0 {
			if err == errLinkChanged {
				return nil // the cursor's own validation stops it
			}
			return err
		}
		if !s.d.Sleep(ctx, min(wait, pollInterval)) {
			return ctx.Err()
		}
	}
}

// readiness is how long c must wait still (0 = send now).
func (s *Shipper) readiness(ctx context.Context, c fanout.RemoteCursor, cs *cursorState) (time.Duration, error) {
	l, st, err := s.readLink(c)
	if err != nil {
		return 0, err
	}
	if st != remote.Running {
		s.setState(c, cs, st, 0)
		return pollInterval, nil
	}
	rs := s.remoteState(l.remote)
	s.noteCredential(rs, cs, l)
	now := s.d.Clock.Now()
	cs.mu.Lock()
	stalled := now.Before(cs.stallUntil) && cs.stallAt == l.stallKey()
	checkDue := !now.Before(cs.nextCheck)
	cs.mu.Unlock()
	if stalled {
		return cs.stallUntil.Sub(now), nil
	}
	if checkDue {
		if st := s.check(ctx, c, cs, rs, l); st != remote.Running {
			s.stall(c, cs, st, l.stallKey(), 0)
			return pollInterval, nil
		}
	}
	rs.mu.Lock()
	closed, reason := rs.gate.Closed()
	ok, _, wait := rs.gate.Admit(now)
	if ok {
		rs.gate.Abandon() // only a look: Ship takes the probe
	}
	rs.mu.Unlock()
	if closed && !ok {
		s.setState(c, cs, reason, 0)
		return wait, nil
	}
	return 0, nil
}

// noteCredential opens the gate and forgets the probe when the remote's
// credential moved (a new password is worth trying at once).
func (s *Shipper) noteCredential(rs *remoteState, cs *cursorState, l link) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.credVersion == l.remote.CredentialVersion {
		return
	}
	rs.credVersion, rs.probed = l.remote.CredentialVersion, false
	rs.gate.CredentialChanged()
	cs.mu.Lock()
	cs.stallUntil = time.Time{}
	cs.mu.Unlock()
}

// stall holds c in state st until StallRetryWait passed or the link
// changed (stallKey).
func (s *Shipper) stall(c fanout.RemoteCursor, cs *cursorState, st remote.State, at stallKey, status int) {
	cs.mu.Lock()
	cs.stallUntil, cs.stallAt = s.d.Clock.Now().Add(remote.StallRetryWait), at
	cs.nextCheck = time.Time{} // a retry starts with a check
	cs.mu.Unlock()
	s.setState(c, cs, st, status)
}

// check runs the runtime target check (internals.md §7.5): the target's
// children listing must name no remote child and the target topic must
// still be the one the link recorded. It returns the state that stops the
// link, or Running; a check that errors never stops sending, is counted
// and retried after min(check_interval_ms, 30 s). The probe of the
// target's batch cap rides along once per credential.
func (s *Shipper) check(ctx context.Context, c fanout.RemoteCursor, cs *cursorState, rs *remoteState, l link) remote.State {
	interval := time.Duration(l.remote.Limits.CheckIntervalMs) * time.Millisecond
	topic := url.PathEscape(l.stub.Remote.Topic)
	st, ok := s.checkTarget(ctx, l.client, topic, l.stub.Remote.TargetID)
	now := s.d.Clock.Now()
	cs.mu.Lock()
	if ok {
		cs.lastCheckMs = now.UnixMilli()
		cs.nextCheck = now.Add(jittered(interval))
	} else {
		cs.nextCheck = now.Add(min(interval, checkRetryMax))
	}
	cs.mu.Unlock()
	if !ok {
		s.d.Metrics.CheckFailed(c.Parent, c.Child)
		return remote.Running
	}
	if st == remote.Running {
		s.probe(ctx, rs, l.client, topic)
		rs.mu.Lock()
		rs.zstdOff = false // a passed check tries compression again
		rs.mu.Unlock()
	}
	return st
}

// checkTarget reads the target topic and its children. ok=false when the
// check could not be made (no answer, an answer no check expects).
func (s *Shipper) checkTarget(ctx context.Context, client ports.RemoteClient, topic, wantID string) (remote.State, bool) {
	a, err := client.Do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/" + topic})
	if err != nil || a.Status != http.StatusOK {
		if err == nil && a.Status == http.StatusNotFound && remote.IsNarad(a.Body) {
			return remote.TargetMissing, true
		}
		return remote.Running, false
	}
	if id := topicID(a.Body); id != wantID && (wantID != "" || id != "") {
		return remote.TargetReplaced, true
	}
	a, err = client.Do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/" + topic + "/children"})
	if err != nil || a.Status != http.StatusOK {
		return remote.Running, false
	}
	if remotes.HasRemoteChild(a.Body) {
		return remote.TargetHasRemoteChildren, true
	}
	return remote.Running, true
}

// probe learns once per credential whether the target takes 1,000
// messages a request (internals.md §7.2 "Chunks").
func (s *Shipper) probe(ctx context.Context, rs *remoteState, client ports.RemoteClient, topic string) {
	rs.mu.Lock()
	done := rs.probed
	rs.mu.Unlock()
	if done {
		return
	}
	a, err := client.Do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/v1/topics/" + topic + "/produce/batch", Body: remote.AppendProbe(nil)})
	if err != nil {
		return
	}
	maxMessages, ok := remote.ProbeCapacity(remote.Answer{Status: a.Status, Body: a.Body})
	if !ok {
		return
	}
	rs.mu.Lock()
	rs.probed, rs.capable1000 = true, maxMessages >= remote.ChunkMaxMessagesCapable
	rs.mu.Unlock()
}

// jittered spreads d by ±20 %.
func jittered(d time.Duration) time.Duration {
	spread := int64(d) * checkJitterPercent / 100
	if spread <= 0 {
		return d
	}
	return d - time.Duration(spread) + time.Duration(rand.Int64N(2*spread+1))
}

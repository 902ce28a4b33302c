package authn

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// flightKey names one verification identical requests share.
type flightKey struct {
	username string
	cred     credential
}

// flight is one password verification and the requests waiting for it.
// Only its leader spent tokens. Fields below done are guarded by
// Authenticator.mu until done closes, then read-only.
type flight struct {
	key        flightKey
	password   []byte // a copy, wiped once checked
	hash       []byte
	record     meta.User
	clean      bool // the user's bucket was full when it was admitted
	tookBudget bool
	remote     string
	ctx        context.Context // ends when every waiter left, or at Close
	cancel     context.CancelFunc
	done       chan struct{}

	waiters   int
	started   bool // its password check began: it will land with a verdict
	abandoned bool // every waiter left before it began: refunded already
	landed    bool
	user      meta.User
	err       error
}

// admission is what admit decided for one request: an answer (user or
// err), or the flight to wait for; audit is a line to record, if any.
type admission struct {
	user  meta.User
	err   error
	f     *flight
	audit *ports.AuditEvent
}

// admit decides, under one lock, what a request for an existing account
// with record r gets: the cached verdict at r's hash, a share of an
// identical check in flight, a throttle refusal, or a new check it leads.
func (a *Authenticator) admit(username string, password []byte, cred *credential, r record, remote string) admission {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.entries[username]; e != nil && bytes.Equal(e.hash, r.hash) {
		switch {
		case e.verified && e.cred.equal(cred):
			return admission{user: e.user}
		case e.rejects(cred, now):
			return admission{err: errRejected}
		}
	}
	key := flightKey{username: username, cred: *cred}
	if f := a.flights[key]; f != nil {
		f.waiters++
		return admission{f: f}
	}
	if a.closed {
		return admission{err: errClosed}
	}
	clean, tookBudget, ev, refused := a.takeTokensLocked(username, remote, now)
	if refused {
		return admission{err: errThrottled, audit: ev}
	}
	ctx, cancel := context.WithCancel(a.ctx)
	f := &flight{key: key, password: bytes.Clone(password), hash: r.hash, record: r.user, clean: clean,
		tookBudget: tookBudget, remote: remote, ctx: ctx, cancel: cancel, done: make(chan struct{}), waiters: 1}
	a.flights[key] = f
	a.wg.Add(1)
	go a.fly(f)
	return admission{f: f}
}

// await waits for f's verdict, or leaves alone when ctx ends first.
func (a *Authenticator) await(ctx context.Context, f *flight) (meta.User, error) {
	a.queued.Add(1)
	defer a.queued.Add(-1)
	select {
	case <-f.done:
		return f.user, f.err
	case <-ctx.Done():
	}
	now := a.clock.Now()
	a.mu.Lock()
	f.waiters--
	if f.waiters == 0 && !f.landed {
		// Nobody waits: a check not begun yet is dropped and refunded now;
		// one already running lands its verdict.
		f.cancel()
		if a.flights[f.key] == f {
			delete(a.flights, f.key)
		}
		if !f.started {
			f.abandoned = true
			a.refundLocked(f, now)
		}
	}
	a.mu.Unlock()
	return meta.User{}, fmt.Errorf("authn: waiting for a password check: %w", ctx.Err())
}

// fly runs f's verification, lands its verdict and then answers its
// waiters (after the audit line, so an answered failure is on record).
func (a *Authenticator) fly(f *flight) {
	defer a.wg.Done()
	defer f.cancel()
	ok, err := a.verify(f)
	if ev := a.land(f, ok, err); ev != nil {
		a.audit.Record(*ev)
	}
	close(f.done)
}

// verify runs the password check once a slot is free (clean checks first).
func (a *Authenticator) verify(f *flight) (bool, error) {
	defer clear(f.password)
	if err := a.slots.acquire(f.ctx, f.clean); err != nil {
		return false, err
	}
	defer a.slots.release()
	a.mu.Lock()
	abandoned := f.abandoned
	f.started = !abandoned
	a.mu.Unlock()
	if abandoned {
		return false, f.ctx.Err()
	}
	start := time.Now() // CPU time measured in real time, not on ports.Clock
	ok, err := a.hasher.Matches(f.ctx, f.hash, f.password)
	if err == nil {
		a.observe(time.Since(start))
	}
	return ok, err
}

// land records f's verdict in the cache, the throttle and f, and returns
// the audit line to record.
func (a *Authenticator) land(f *flight, ok bool, err error) *ports.AuditEvent {
	now := a.clock.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.flights[f.key] == f {
		delete(a.flights, f.key)
	}
	f.landed = true
	e := a.entries[f.key.username]
	if e != nil && !bytes.Equal(e.hash, f.hash) {
		e = nil // the password changed meanwhile: this verdict is about the old one
	}
	switch {
	case err != nil:
		if !f.abandoned {
			a.refundLocked(f, now)
		}
		f.err = fmt.Errorf("authn: check the password of %q: %w: %w", f.key.username, domain.ErrAuthUnavailable, err)
		if a.ctx.Err() != nil {
			f.err = errClosed
		}
		return nil
	case ok:
		a.refundLocked(f, now)
		f.user = f.record
		if e != nil {
			e.verified, e.cred = true, f.key.cred
			f.user = e.user
		}
		return nil
	}
	a.chargeFailureLocked(f, now)
	if e != nil {
		e.addNegative(f.key.cred, now)
	}
	f.err = errRejected
	return &ports.AuditEvent{Event: ports.AuditAuthFailed, Actor: f.key.username, Subject: "user " + f.key.username,
		Outcome: ports.AuditRefused, Reason: "wrong password", Remote: f.remote}
}

// observe moves the estimate of one verification toward d.
func (a *Authenticator) observe(d time.Duration) {
	d = min(d, verifyEstimateMax)
	for {
		old := a.estimate.Load()
		next := old + (int64(d)-old)/verifyEstimateWeight
		if old == 0 {
			next = int64(d)
		}
		if a.estimate.CompareAndSwap(old, next) {
			return
		}
	}
}

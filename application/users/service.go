package users

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrInvalidConfig reports a Service or Seeder built with a missing
// dependency or an impossible setting.
var ErrInvalidConfig = errors.New("users: invalid configuration")

// CredentialChecker verifies a user's password through the node's
// authenticator (its cache and throttle): *authn.Authenticator satisfies it.
// Errors: domain.ErrUnauthenticated for a wrong password or unknown user,
// domain.ErrAuthThrottled, domain.ErrAuthUnavailable, ctx.Err().
type CredentialChecker interface {
	Authenticate(ctx context.Context, username string, password []byte, remote string) (meta.User, error)
}

// Service runs the user-management use cases of one node. Safe for
// concurrent use.
type Service struct {
	store  ports.MetadataStore
	hasher ports.PasswordHasher
	creds  CredentialChecker
	clock  ports.Clock
	audit  ports.AuditLog
	hashes chan struct{} // one token per hash in flight
}

// New returns a Service; every dependency is required.
func New(store ports.MetadataStore, hasher ports.PasswordHasher, creds CredentialChecker,
	clock ports.Clock, audit ports.AuditLog) (*Service, error) {
	if store == nil || hasher == nil || creds == nil || clock == nil || audit == nil {
		return nil, fmt.Errorf("nil dependency: %w", ErrInvalidConfig)
	}
	return &Service{store: store, hasher: hasher, creds: creds, clock: clock, audit: audit,
		hashes: make(chan struct{}, hashesInFlightMax)}, nil
}

// hash hashes password once a hashing slot is free. A free slot is taken
// even when ctx has ended (the hasher itself refuses an ended ctx), so the
// bound is the only reason a request waits.
func (s *Service) hash(ctx context.Context, password string) ([]byte, error) {
	select {
	case s.hashes <- struct{}{}:
	default:
		select {
		case s.hashes <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("users: waiting for a hashing slot: %w", ctx.Err())
		}
	}
	defer func() { <-s.hashes }()
	h, err := s.hasher.Hash(ctx, []byte(password))
	if err != nil {
		return nil, fmt.Errorf("users: hash password: %w", err)
	}
	return h, nil
}

// envelope stamps ev with p as its actor and the proposer's clock.
func (s *Service) envelope(p access.Principal, ev meta.Event) meta.Envelope {
	return meta.Envelope{Actor: p.Name, AtMs: s.clock.Now().UnixMilli(), Event: ev}
}

// propose proposes ev for p and returns what apply decided.
func (s *Service) propose(ctx context.Context, p access.Principal, ev meta.Event) (meta.Result, error) {
	applied, err := s.store.Propose(ctx, s.envelope(p, ev))
	if err != nil {
		return meta.Result{}, proposeFailure(err)
	}
	return applied.Result, nil
}

// readUser reads name from the local replica: domain.ErrUserNotFound when
// absent. The hash is kept: callers that answer clear it with public.
func (s *Service) readUser(name string) (meta.User, error) {
	u, ok, err := s.store.User(name)
	switch {
	case err != nil:
		return meta.User{}, readFailure(err)
	case !ok:
		return meta.User{}, domain.ErrUserNotFound
	}
	return u, nil
}

// public is u as an answer may carry it: without the password hash.
func public(u meta.User) meta.User {
	u.PasswordHash = nil
	return u
}

// cloneGrants copies grants deeply, so an entry never shares the caller's
// slices.
func cloneGrants(grants []meta.Grant) []meta.Grant {
	if grants == nil {
		return nil
	}
	out := make([]meta.Grant, len(grants))
	for i, g := range grants {
		out[i] = meta.Grant{Action: g.Action, Patterns: slices.Clone(g.Patterns)}
	}
	return out
}

// adminOnly is the admin check every route but the password change starts
// with.
func adminOnly(p access.Principal) error {
	return access.Decide(p, access.Request{Op: access.OpAdmin})
}

func forbid(msg string) error { return domain.Refuse(domain.ErrForbidden, msg) }

// readFailure maps a local metadata read error: a stopped or lagging replica
// is transient (503), anything else is internal.
func readFailure(err error) error {
	if errors.Is(err, meta.ErrStopped) || errors.Is(err, meta.ErrNotCaughtUp) || errors.Is(err, meta.ErrUnavailable) {
		return domain.Refuse(domain.ErrUnavailable, "metadata unavailable on this node: "+err.Error())
	}
	return fmt.Errorf("users: read metadata: %w", err)
}

// proposeFailure maps a Propose error. An invalid event (a bug here) and a
// type held back by an older member are certain not to apply; anything else
// may still apply.
func proposeFailure(err error) error {
	if errors.Is(err, meta.ErrInvalidEvent) || errors.Is(err, meta.ErrTypeHeldBack) {
		return fmt.Errorf("users: proposal refused: %w", err)
	}
	return domain.Refuse(domain.ErrUnavailable,
		"control plane temporarily unavailable: the change may still be applied, read it back before retrying: "+err.Error())
}

// unexpected wraps an apply result no rule of this package anticipates.
func unexpected(op, name string, res meta.Result) error {
	return fmt.Errorf("users: %s %q: %w", op, name, res.Err())
}

// record writes the audit line of one write attempt by p on account name:
// ok, refused (a client refusal, with its message) or failed.
func (s *Service) record(event string, p access.Principal, name, remote string, err error) {
	outcome, reason := auditOutcome(err)
	s.audit.Record(ports.AuditEvent{Event: event, Actor: p.Name, Subject: auditSubject(name),
		Outcome: outcome, Reason: reason, Remote: remote})
}

// auditOutcome classifies err as the audit log names it, with the message
// the client reads. Errors here never carry a password or a hash.
func auditOutcome(err error) (outcome, reason string) {
	var r *domain.Refusal
	switch {
	case err == nil:
		return ports.AuditOK, ""
	case errors.Is(err, domain.ErrUnavailable):
		return ports.AuditFailed, err.Error()
	case errors.As(err, &r):
		return ports.AuditRefused, r.Detail
	case errors.Is(err, domain.ErrUserNotFound):
		return ports.AuditRefused, "not found"
	case errors.Is(err, domain.ErrUserExists):
		return ports.AuditRefused, "already exists"
	case errors.Is(err, domain.ErrAuthThrottled):
		return ports.AuditRefused, "too many failed authentication attempts"
	}
	return ports.AuditFailed, err.Error()
}

// auditSubject names the account acted on; a name breaking the username
// rule is quoted and cut, so a client cannot forge or flood the line.
func auditSubject(name string) string {
	if access.ValidUsername(name) == nil {
		return "user " + name
	}
	if len(name) > auditNameMaxBytes {
		name = name[:auditNameMaxBytes]
	}
	return "user " + strconv.Quote(name)
}

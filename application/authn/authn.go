package authn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ErrInvalidConfig reports New called with a missing dependency, or Start
// after Close.
var ErrInvalidConfig = errors.New("authn: invalid configuration")

// Answers built once, so the common refusals allocate nothing. An unknown
// user and a wrong password read the same.
var (
	errRejected  = fmt.Errorf("authn: unknown user or wrong password: %w", domain.ErrUnauthenticated)
	errMalformed = fmt.Errorf("authn: malformed credentials: %w", domain.ErrUnauthenticated)
	errThrottled = fmt.Errorf("authn: %w", domain.ErrAuthThrottled)
	errClosed    = fmt.Errorf("authn: authenticator closed: %w", domain.ErrAuthUnavailable)
)

// Option adjusts an Authenticator built by New.
type Option func(*config)

type config struct {
	estimate time.Duration // seeds the verification estimate; > 0 skips calibration
}

// WithVerifyEstimate seeds the estimate of one password verification (how
// long an unknown username is held) with d, and makes Start skip its
// calibration. d <= 0 is ignored.
func WithVerifyEstimate(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.estimate = d
		}
	}
}

// Authenticator checks HTTP Basic credentials for one node. Safe for
// concurrent use.
type Authenticator struct {
	users   ports.MetadataAccess
	watcher ports.MetadataWatcher
	hasher  ports.PasswordHasher
	clock   ports.Clock
	audit   ports.AuditLog
	cfg     config
	mac     *macKey
	slots   *slots

	version  atomic.Uint64 // users version: bumped by every applied user change
	watching atomic.Bool   // a subscription is live; while false every entry is stale
	estimate atomic.Int64  // nanoseconds of one verification (moving average)
	queued   atomic.Int64  // requests admitted to a password check and not finished

	ctx  context.Context // ends at Close: flights, paces and the watcher stop
	stop context.CancelFunc
	wg   sync.WaitGroup

	life    sync.Mutex // serializes Start and Close
	started bool

	mu       sync.RWMutex
	closed   bool
	entries  map[string]*entry
	unknown  map[unknownKey]unknownSeenAt
	buckets  map[string]*bucket
	sweepAt  int // len(buckets) at which full buckets are swept
	budget   bucket
	budgetAt time.Time // last audited budget refusal
	flights  map[flightKey]*flight
}

// New builds an Authenticator. users reads accounts from the local metadata
// replica; watcher delivers applied metadata entries (for cache
// invalidation); audit gets auth.failed / auth.throttled events.
func New(users ports.MetadataAccess, watcher ports.MetadataWatcher, hasher ports.PasswordHasher,
	clock ports.Clock, audit ports.AuditLog, opts ...Option) (*Authenticator, error) {
	if users == nil || watcher == nil || hasher == nil || clock == nil || audit == nil {
		return nil, fmt.Errorf("authn: nil dependency: %w", ErrInvalidConfig)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	ctx, stop := context.WithCancel(context.Background())
	a := &Authenticator{
		users: users, watcher: watcher, hasher: hasher, clock: clock, audit: audit, cfg: cfg,
		mac: newMACKey(), slots: newSlots(verifySlotsMax), ctx: ctx, stop: stop,
		entries: map[string]*entry{}, unknown: map[unknownKey]unknownSeenAt{},
		buckets: map[string]*bucket{}, sweepAt: cachedUsersMax, flights: map[flightKey]*flight{},
		budget: bucket{tokens: failureBudgetBurstTokens, at: clock.Now()},
	}
	a.estimate.Store(int64(min(cfg.estimate, verifyEstimateMax)))
	return a, nil
}

// Start calibrates the verification estimate (unless an Option seeded it)
// and subscribes to metadata changes. Before Start every request re-reads
// its account; a second Start does nothing.
func (a *Authenticator) Start() error {
	a.life.Lock()
	defer a.life.Unlock()
	switch {
	case a.ctx.Err() != nil:
		return fmt.Errorf("authn: start after close: %w", ErrInvalidConfig)
	case a.started:
		return nil
	}
	if a.cfg.estimate <= 0 {
		if err := a.calibrate(); err != nil {
			return err
		}
	}
	sub, err := a.watcher.Watch(watchBufferCount)
	if err != nil {
		return fmt.Errorf("authn: watch metadata: %w", err)
	}
	a.version.Add(1)
	a.watching.Store(true)
	a.started = true
	a.wg.Add(1)
	go a.watch(sub)
	return nil
}

// Close stops the watcher and every queued check, waits for the checks
// already running, and leaves no goroutine. Idempotent; requests after it
// that need a check answer domain.ErrAuthUnavailable.
func (a *Authenticator) Close() {
	a.life.Lock()
	defer a.life.Unlock()
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.stop()
	a.wg.Wait()
}

// VerifyQueued is the number of password checks admitted and not finished
// (the gauge narad_auth_verify_queued): requests waiting for a
// verification slot, running one, or sharing another request's.
func (a *Authenticator) VerifyQueued() int64 { return a.queued.Load() }

// Authenticate checks HTTP Basic credentials. On success it returns the
// account's current record with PasswordHash cleared; its Grants are
// shared with the cache and must not be modified. Errors:
// domain.ErrUnauthenticated (unknown user, wrong password, malformed
// input), domain.ErrAuthThrottled, domain.ErrAuthUnavailable (the user
// store could not be read), or ctx.Err() when the caller went away.
func (a *Authenticator) Authenticate(ctx context.Context, username string, password []byte, remote string) (meta.User, error) {
	if !wellFormed(username, password) {
		return meta.User{}, errMalformed
	}
	cred := a.mac.sum(password)
	fresh, v := a.watching.Load(), a.version.Load()
	if u, ok := a.hit(username, &cred, fresh, v); ok {
		return u, nil
	}
	r, st, err := a.lookup(username, &cred, fresh, v)
	switch {
	case err != nil:
		return meta.User{}, err
	case st == unknownSeen:
		return meta.User{}, errRejected
	case st == unknownNew:
		return meta.User{}, a.unknownUser(ctx, username, &cred, fresh, v)
	}
	ad := a.admit(username, password, &cred, r, remote)
	if ad.audit != nil {
		a.audit.Record(*ad.audit)
	}
	if ad.f == nil {
		return ad.user, ad.err
	}
	return a.await(ctx, ad.f)
}

// wellFormed is the input hygiene: a username by the account rule (1 to 64
// bytes of A-Z a-z 0-9 . _ -, so UTF-8 by construction) and a password of 1
// to 72 bytes. Anything else is answered 401 before any other work.
func wellFormed(username string, password []byte) bool {
	return len(username) <= usernameMaxBytes && len(password) > 0 && len(password) <= passwordMaxBytes &&
		access.ValidUsername(username) == nil
}

// unknownUser answers an unknown username: remembered for negativeTTL, then
// held for the estimate of one verification (see doc.go).
func (a *Authenticator) unknownUser(ctx context.Context, username string, cred *credential, fresh bool, v uint64) error {
	if fresh {
		a.rememberUnknown(username, cred, v)
	}
	if err := a.pace(ctx); err != nil {
		return err
	}
	return errRejected
}

// pace waits for the current estimate of one verification, the caller's
// ctx or Close, whichever ends first.
func (a *Authenticator) pace(ctx context.Context) error {
	d := time.Duration(a.estimate.Load())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-a.ctx.Done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("authn: %w", ctx.Err())
	}
}

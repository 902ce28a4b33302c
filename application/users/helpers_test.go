package users_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// startTime is the fake clock's start.
var startTime = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

// The fixture's accounts: the root "admin", a non-root admin "ops", and
// "alice", who may produce to orders-*.
const (
	rootPassword  = "root-secret-1"
	opsPassword   = "ops-secret-2"
	alicePassword = "alice-secret-3"
)

var aliceGrants = []meta.Grant{{Action: access.ActionProduce, Patterns: []string{"orders-*"}}}

// testHasher is a salted stand-in for bcrypt: every hash of one password
// differs, and Matches tells right from wrong. It counts calls.
type testHasher struct {
	mu     sync.Mutex
	salt   int
	hashes int
	err    error // what Hash fails with, when set
}

var _ ports.PasswordHasher = (*testHasher)(nil)

func (h *testHasher) Hash(ctx context.Context, password []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return nil, h.err
	}
	h.salt++
	h.hashes++
	return digest(fmt.Sprint(h.salt), password), nil
}

func (h *testHasher) Matches(_ context.Context, hash, password []byte) (bool, error) {
	salt, _, ok := bytes.Cut(hash, []byte("$"))
	if !ok {
		return false, errors.New("test hasher: malformed hash")
	}
	return bytes.Equal(hash, digest(string(salt), password)), nil
}

// Hashes counts successful Hash calls.
func (h *testHasher) Hashes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hashes
}

func digest(salt string, password []byte) []byte {
	sum := sha256.Sum256(append([]byte(salt+"$"), password...))
	return []byte(salt + "$" + hex.EncodeToString(sum[:]))
}

// checker is the authenticator as SetPassword sees it: it checks the
// password against the replica and records every call.
type checker struct {
	store  *fake.MetaStore
	hasher ports.PasswordHasher

	mu        sync.Mutex
	throttled bool
	calls     []checkCall
}

type checkCall struct{ username, password, remote string }

func (c *checker) Authenticate(ctx context.Context, username string, password []byte, remote string) (meta.User, error) {
	c.mu.Lock()
	c.calls = append(c.calls, checkCall{username, string(password), remote})
	throttled := c.throttled
	c.mu.Unlock()
	if throttled {
		return meta.User{}, domain.ErrAuthThrottled
	}
	u, ok, err := c.store.User(username)
	if err != nil || !ok {
		return meta.User{}, domain.ErrUnauthenticated
	}
	if ok, err := c.hasher.Matches(ctx, u.PasswordHash, password); err != nil || !ok {
		return meta.User{}, domain.ErrUnauthenticated
	}
	return u, nil
}

func (c *checker) Calls() []checkCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]checkCall(nil), c.calls...)
}

func (c *checker) Throttle(v bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.throttled = v
}

// hookStore runs beforePropose (when set) ahead of every proposal, as if
// another node's entry had been applied first, and onIsLeader (when set)
// after every leadership check.
type hookStore struct {
	*fake.MetaStore
	beforePropose func()
	onIsLeader    func()
	readErr       error // what account reads fail with, when set
}

func (s *hookStore) User(name string) (meta.User, bool, error) {
	if s.readErr != nil {
		return meta.User{}, false, s.readErr
	}
	return s.MetaStore.User(name)
}

func (s *hookStore) Users() ([]meta.User, error) {
	if s.readErr != nil {
		return nil, s.readErr
	}
	return s.MetaStore.Users()
}

func (s *hookStore) IsLeader() bool {
	v := s.MetaStore.IsLeader()
	if s.onIsLeader != nil {
		s.onIsLeader()
	}
	return v
}

func (s *hookStore) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	if s.beforePropose != nil {
		s.beforePropose()
	}
	return s.MetaStore.Propose(ctx, env)
}

type fixture struct {
	svc    *users.Service
	meta   *fake.MetaStore
	store  *hookStore
	hasher *testHasher
	creds  *checker
	clock  *fake.Clock
	audit  *fake.Audit
}

// newFixture builds the service over a replica holding root, ops and alice.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := newEmptyFixture(t)
	f.propose(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: f.hash(t, rootPassword)})
	f.propose(t, &meta.CreateUser{Username: "ops", PasswordHash: f.hash(t, opsPassword),
		Grants: []meta.Grant{{Action: access.ActionAdmin}}})
	f.propose(t, &meta.CreateUser{Username: "alice", PasswordHash: f.hash(t, alicePassword), Grants: aliceGrants})
	return f
}

// newEmptyFixture builds the service over a replica without accounts.
func newEmptyFixture(t *testing.T) *fixture {
	t.Helper()
	m := fake.NewMetaStore()
	h := &testHasher{}
	f := &fixture{meta: m, store: &hookStore{MetaStore: m}, hasher: h, creds: &checker{store: m, hasher: h},
		clock: fake.NewClock(startTime), audit: &fake.Audit{}}
	svc, err := users.New(f.store, f.hasher, f.creds, f.clock, f.audit)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

func (f *fixture) hash(t *testing.T, password string) []byte {
	t.Helper()
	h, err := f.hasher.Hash(context.Background(), []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// propose applies ev as another node would have, outside the service.
func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	got, err := f.meta.Propose(context.Background(), meta.Envelope{Actor: "setup", AtMs: startTime.UnixMilli(), Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
	}
}

// commit appends ev as another node's entry (used inside hooks).
func (f *fixture) commit(t *testing.T, ev meta.Event) {
	t.Helper()
	if _, err := f.meta.Commit(meta.Envelope{Actor: "other", AtMs: startTime.UnixMilli(), Event: ev}); err != nil {
		t.Fatal(err)
	}
}

// user reads an account straight from the replica, hash included.
func (f *fixture) user(t *testing.T, name string) meta.User {
	t.Helper()
	u, ok, err := f.meta.User(name)
	if err != nil || !ok {
		t.Fatalf("user %q: ok=%v err=%v", name, ok, err)
	}
	return u
}

// principal is the authenticated account name as the HTTP adapter builds it.
func (f *fixture) principal(t *testing.T, name string) access.Principal {
	t.Helper()
	return access.FromUser(f.user(t, name))
}

// passwordIs reports whether name's stored hash is of password.
func (f *fixture) passwordIs(t *testing.T, name, password string) bool {
	t.Helper()
	ok, err := f.hasher.Matches(context.Background(), f.user(t, name).PasswordHash, []byte(password))
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// lastEntry is the newest entry of the metadata history.
func (f *fixture) lastEntry(t *testing.T) meta.JournalEntry {
	t.Helper()
	h, err := f.meta.History(0, 1)
	if err != nil || len(h) != 1 {
		t.Fatalf("history: %v %v", h, err)
	}
	return h[0]
}

// lastAudit is the newest audit line.
func (f *fixture) lastAudit(t *testing.T) ports.AuditEvent {
	t.Helper()
	ev := f.audit.Events()
	if len(ev) == 0 {
		t.Fatal("no audit line")
	}
	return ev[len(ev)-1]
}

// wantAudit checks the newest audit line.
func (f *fixture) wantAudit(t *testing.T, want ports.AuditEvent) {
	t.Helper()
	if got := f.lastAudit(t); got != want {
		t.Fatalf("audit line\n got %+v\nwant %+v", got, want)
	}
}

// wantNoSecretAudited checks that no audit line repeats any of secrets.
func (f *fixture) wantNoSecretAudited(t *testing.T, secrets ...string) {
	t.Helper()
	for _, e := range f.audit.Events() {
		line := fmt.Sprintf("%+v", e)
		for _, s := range secrets {
			if s != "" && strings.Contains(line, s) {
				t.Fatalf("audit line %s holds a secret", line)
			}
		}
	}
}

// wantRefusal checks err is sentinel with exactly msg as its client message
// ("" skips the message).
func wantRefusal(t *testing.T, err, sentinel error, msg string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
	if msg == "" {
		return
	}
	var r *domain.Refusal
	if !errors.As(err, &r) || r.Detail != msg {
		t.Fatalf("message %q, want %q", err, msg)
	}
}

func admin() []meta.Grant { return []meta.Grant{{Action: access.ActionAdmin}} }

func produce(patterns ...string) []meta.Grant {
	return []meta.Grant{{Action: access.ActionProduce, Patterns: patterns}}
}

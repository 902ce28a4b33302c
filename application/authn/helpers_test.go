package authn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/authn"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// startTime is the fake clock's start.
var startTime = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

// The fixture's accounts.
const (
	alicePassword = "alice-secret-1"
	bobPassword   = "bob-secret-2"
	testRemote    = "192.0.2.7"
)

var aliceGrants = []meta.Grant{{Action: access.ActionProduce, Patterns: []string{"orders-*"}}}

// countingUsers counts store reads and fails them on demand.
type countingUsers struct {
	ports.MetadataAccess
	reads atomic.Int64
	fail  atomic.Bool
}

var errStoreDown = errors.New("test: store unreadable")

func (c *countingUsers) User(name string) (meta.User, bool, error) {
	c.reads.Add(1)
	if c.fail.Load() {
		return meta.User{}, false, errStoreDown
	}
	return c.MetadataAccess.User(name)
}

type fixture struct {
	store  *fake.MetaStore
	users  *countingUsers
	hasher *fake.Hasher
	clock  *fake.Clock
	audit  *fake.Audit
	auth   *authn.Authenticator
	base   int // Matches calls made by Start's calibration
}

// setup tunes a fixture before its authenticator starts.
type setup struct {
	watcher ports.MetadataWatcher // the store itself when nil
	cost    time.Duration         // the fake hasher's cost per call
	opts    []authn.Option
}

// newFixture starts an authenticator over a replica holding alice (a
// producer) and bob (an admin).
func newFixture(t testing.TB) *fixture { return newFixtureWith(t, setup{}) }

func newFixtureWith(t testing.TB, s setup) *fixture {
	t.Helper()
	f := &fixture{store: fake.NewMetaStore(), hasher: fake.NewHasher(), clock: fake.NewClock(startTime), audit: &fake.Audit{}}
	f.users = &countingUsers{MetadataAccess: f.store}
	f.hasher.SetCost(s.cost)
	f.createUser(t, "alice", alicePassword, aliceGrants)
	f.createUser(t, "bob", bobPassword, []meta.Grant{{Action: access.ActionAdmin}})
	watcher := s.watcher
	if watcher == nil {
		watcher = f.store
	}
	a, err := authn.New(f.users, watcher, f.hasher, f.clock, f.audit, s.opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		f.store.Close()
	})
	f.auth, f.base = a, f.hasher.MatchesCalls()
	f.users.reads.Store(0)
	return f
}

// propose applies ev as the cluster would.
func (f *fixture) propose(t testing.TB, ev meta.Event) {
	t.Helper()
	got, err := f.store.Propose(context.Background(), meta.Envelope{Actor: "setup", AtMs: startTime.UnixMilli(), Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
	}
}

func (f *fixture) createUser(t testing.TB, name, password string, grants []meta.Grant) {
	t.Helper()
	f.propose(t, &meta.CreateUser{Username: name, PasswordHash: fake.FakeHash([]byte(password)), Grants: grants})
}

// login authenticates from testRemote with a background context.
func (f *fixture) login(name, password string) (meta.User, error) {
	return f.auth.Authenticate(context.Background(), name, []byte(password), testRemote)
}

// matches counts Matches calls since Start.
func (f *fixture) matches() int { return f.hasher.MatchesCalls() - f.base }

// wantLogin checks that name gets in with password.
func (f *fixture) wantLogin(t testing.TB, name, password string) meta.User {
	t.Helper()
	u, err := f.login(name, password)
	if err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	if u.Username != name || u.PasswordHash != nil {
		t.Fatalf("login %s: got %+v", name, u)
	}
	return u
}

// wantRefused checks that name with password is refused with target.
func (f *fixture) wantRefused(t testing.TB, name, password string, target error) {
	t.Helper()
	if _, err := f.login(name, password); !errors.Is(err, target) {
		t.Fatalf("login %s: %v, want %v", name, err, target)
	}
}

// eventually polls cond until it holds, failing after a deadline.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// result is one Authenticate answer from a goroutine.
type result struct {
	user meta.User
	err  error
}

// goLogin authenticates in a goroutine tracked by wg.
func (f *fixture) goLogin(ctx context.Context, wg *sync.WaitGroup, name, password string) <-chan result {
	out := make(chan result, 1)
	wg.Go(func() {
		u, err := f.auth.Authenticate(ctx, name, []byte(password), testRemote)
		out <- result{u, err}
	})
	return out
}

// wrong is the i-th distinct wrong password.
func wrong(i int) string { return fmt.Sprintf("wrong-%d", i) }

// isAuthErr reports whether err is one of the answers a client can get.
func isAuthErr(err error) bool {
	return err == nil || errors.Is(err, domain.ErrUnauthenticated) || errors.Is(err, domain.ErrAuthThrottled)
}

// ctlWatcher is a metadata watcher the test drives by hand: it relays
// nothing unless told to.
type ctlWatcher struct {
	mu      sync.Mutex
	subs    []*ctlSub
	watches int
}

type ctlSub struct {
	ch   chan ports.MetaChange
	once sync.Once
	mu   sync.Mutex
	err  error
}

func (w *ctlWatcher) Watch(int) (ports.MetaSubscription, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &ctlSub{ch: make(chan ports.MetaChange, 16)}
	w.subs = append(w.subs, s)
	w.watches++
	return s, nil
}

func (w *ctlWatcher) Watches() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watches
}

func (w *ctlWatcher) last() *ctlSub {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.subs[len(w.subs)-1]
}

func (s *ctlSub) C() <-chan ports.MetaChange { return s.ch }

func (s *ctlSub) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *ctlSub) Close() { s.end(nil) }

func (s *ctlSub) end(err error) {
	s.once.Do(func() {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
		close(s.ch)
	})
}

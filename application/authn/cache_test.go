package authn_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// ensure that a verified credential is answered from cache: no password
// check and no store read, and the answer carries grants but no hash.
func TestCachedCredentialSkipsHasherAndStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	u := f.wantLogin(t, "alice", alicePassword)
	if !reflect.DeepEqual(u.Grants, aliceGrants) || u.Root {
		t.Fatalf("alice: %+v", u)
	}
	reads := f.users.reads.Load()
	for range 100 {
		f.wantLogin(t, "alice", alicePassword)
	}
	if n := f.matches(); n != 1 {
		t.Fatalf("%d password checks, want 1", n)
	}
	if n := f.users.reads.Load(); n != reads {
		t.Fatalf("%d store reads on cache hits", n-reads)
	}
}

// ensure that a password change takes effect on the next request once its
// entry applied: the old password is refused, the new one accepted.
func TestPasswordChangeInvalidatesCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantLogin(t, "alice", alicePassword)
	f.propose(t, &meta.SetUserPassword{Username: "alice", PasswordHash: fake.FakeHash([]byte("alice-new"))})
	eventually(t, "the old password is refused", func() bool {
		_, err := f.login("alice", alicePassword)
		return errors.Is(err, domain.ErrUnauthenticated)
	})
	f.wantLogin(t, "alice", "alice-new")
}

// ensure that a changed hash clears the user's negative entries: a
// password refused before the change is accepted once it is the password.
func TestPasswordChangeClearsNegativeCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantRefused(t, "alice", "alice-next", domain.ErrUnauthenticated)
	f.propose(t, &meta.SetUserPassword{Username: "alice", PasswordHash: fake.FakeHash([]byte("alice-next"))})
	eventually(t, "the new password is accepted", func() bool {
		_, err := f.login("alice", "alice-next")
		return err == nil
	})
}

// ensure that a grants change reaches the next request without a new
// password check (same hash keeps the positive entry).
func TestGrantsChangeTakesEffect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantLogin(t, "alice", alicePassword)
	grants := []meta.Grant{{Action: access.ActionConsume, Patterns: []string{"billing"}}}
	f.propose(t, &meta.SetUserGrants{Username: "alice", Grants: grants})
	eventually(t, "the new grants are served", func() bool {
		u, err := f.login("alice", alicePassword)
		return err == nil && reflect.DeepEqual(u.Grants, grants)
	})
	if n := f.matches(); n != 1 {
		t.Fatalf("%d password checks, want 1", n)
	}
}

// ensure that a deleted account is refused although its credential was
// cached.
func TestDeletedUserRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantLogin(t, "alice", alicePassword)
	f.propose(t, &meta.DeleteUserReleaseTopics{Username: "alice"})
	eventually(t, "alice is refused", func() bool {
		_, err := f.login("alice", alicePassword)
		return errors.Is(err, domain.ErrUnauthenticated)
	})
}

// ensure that a snapshot restore invalidates the cache, and that the cache
// is trusted until something says the users changed.
func TestRestoredChangeInvalidatesCache(t *testing.T) {
	t.Parallel()
	w := &ctlWatcher{}
	f := newFixtureWith(t, setup{watcher: w})
	f.wantLogin(t, "alice", alicePassword)
	f.propose(t, &meta.SetUserPassword{Username: "alice", PasswordHash: fake.FakeHash([]byte("alice-new"))})
	f.wantLogin(t, "alice", alicePassword) // nothing relayed: still the cached verdict
	w.last().ch <- ports.MetaChange{Index: 99, Restored: true}
	eventually(t, "the old password is refused", func() bool {
		_, err := f.login("alice", alicePassword)
		return errors.Is(err, domain.ErrUnauthenticated)
	})
}

// ensure that a watch that fell behind invalidates the cache and is
// replaced by a new subscription.
func TestLaggedWatchResubscribes(t *testing.T) {
	t.Parallel()
	w := &ctlWatcher{}
	f := newFixtureWith(t, setup{watcher: w})
	f.wantLogin(t, "alice", alicePassword)
	f.propose(t, &meta.SetUserPassword{Username: "alice", PasswordHash: fake.FakeHash([]byte("alice-new"))})
	w.last().end(meta.ErrWatchLagged)
	eventually(t, "a second subscription", func() bool { return w.Watches() == 2 })
	eventually(t, "the old password is refused", func() bool {
		_, err := f.login("alice", alicePassword)
		return errors.Is(err, domain.ErrUnauthenticated)
	})
}

// ensure that a wrong password seen in the last 60 s is refused from cache
// without a password check or a token, and checked again after 60 s.
func TestNegativeCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for range 11 {
		f.wantRefused(t, "alice", "nope", domain.ErrUnauthenticated)
	}
	if n := f.matches(); n != 1 {
		t.Fatalf("%d password checks for one repeated wrong password, want 1", n)
	}
	// Only the first cost a token: four more distinct failures fit.
	for i := range 4 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(4), domain.ErrAuthThrottled)
	f.clock.Advance(61 * time.Second)
	f.wantRefused(t, "alice", "nope", domain.ErrUnauthenticated)
	if n := f.matches(); n != 6 {
		t.Fatalf("%d password checks, want 6 (the expired entry checked again)", n)
	}
}

// ensure that a repeated unknown (username, password) pair is answered
// from cache without a store read, until the users change.
func TestUnknownPairCached(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantRefused(t, "mallory", "pw", domain.ErrUnauthenticated)
	reads := f.users.reads.Load()
	f.wantRefused(t, "mallory", "pw", domain.ErrUnauthenticated)
	if f.users.reads.Load() != reads {
		t.Fatal("a repeated unknown pair read the store")
	}
	f.createUser(t, "mallory", "pw", nil)
	eventually(t, "mallory gets in", func() bool {
		_, err := f.login("mallory", "pw")
		return err == nil
	})
}

// ensure that at most 4,096 users stay cached.
func TestCachedUsersBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 4,097 accounts")
	}
	t.Parallel()
	f := newFixture(t)
	const n = 4096 + 1
	for i := range n {
		if _, err := f.store.Commit(meta.Envelope{Actor: "setup", AtMs: startTime.UnixMilli(), Event: &meta.CreateUser{
			Username: fmt.Sprintf("u%04d", i), PasswordHash: fake.FakeHash([]byte("pw"))}}); err != nil {
			t.Fatal(err)
		}
	}
	login := func() {
		for i := range n {
			if _, err := f.auth.Authenticate(context.Background(), fmt.Sprintf("u%04d", i), []byte("pw"), testRemote); err != nil {
				t.Fatal(err)
			}
		}
	}
	login()
	checks := f.matches()
	login()
	if f.matches() == checks {
		t.Fatalf("all %d users answered from cache", n)
	}
}

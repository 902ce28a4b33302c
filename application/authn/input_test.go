package authn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/authn"
	"github.com/narad/narad/domain"
)

// ensure that malformed credentials are answered 401 at once: no store
// read, no password check, no wait.
func TestMalformedInput(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, setup{opts: []authn.Option{authn.WithVerifyEstimate(time.Second)}})
	cases := map[string]struct{ user, pw string }{
		"empty user":          {"", "pw"},
		"long user":           {strings.Repeat("a", 65), "pw"},
		"non-utf8 user":       {"al\xffce", "pw"},
		"unicode user":        {"alicé", "pw"},
		"space in user":       {"ali ce", "pw"},
		"colon in user":       {"alice:x", "pw"},
		"dot user":            {".", "pw"},
		"empty password":      {"alice", ""},
		"long password":       {"alice", alicePassword + strings.Repeat("x", 72)},
		"73-byte password":    {"alice", strings.Repeat("p", 73)},
		"nul in user":         {"ali\x00ce", "pw"},
		"long unknown user":   {strings.Repeat("z", 1000), strings.Repeat("p", 1000)},
		"user at limit, long": {strings.Repeat("a", 64), strings.Repeat("p", 73)},
	}
	for name, c := range cases {
		start := time.Now()
		_, err := f.auth.Authenticate(context.Background(), c.user, []byte(c.pw), testRemote)
		if !errors.Is(err, domain.ErrUnauthenticated) {
			t.Errorf("%s: %v, want ErrUnauthenticated", name, err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%s: answered after %v (held like an unknown user)", name, d)
		}
	}
	if r := f.users.reads.Load(); r != 0 {
		t.Fatalf("%d store reads for malformed input", r)
	}
	if c := f.matches(); c != 0 {
		t.Fatalf("%d password checks for malformed input", c)
	}
	// 72 bytes is a password, and a 64-byte name a username.
	f.wantRefused(t, "alice", strings.Repeat("p", 72), domain.ErrUnauthenticated)
	if c := f.matches(); c != 1 {
		t.Fatalf("a 72-byte password was not checked")
	}
}

// ensure that an unknown username is answered no sooner than a password
// check takes (the calibrated estimate), a repeated unknown pair at once,
// and that the wait ends with the caller's context.
func TestUnknownUserPaced(t *testing.T) {
	t.Parallel()
	const cost = 80 * time.Millisecond
	f := newFixtureWith(t, setup{cost: cost})
	start := time.Now()
	f.wantRefused(t, "mallory", "pw", domain.ErrUnauthenticated)
	if d := time.Since(start); d < cost/2 {
		t.Fatalf("unknown user answered after %v, want about %v", d, cost)
	}
	start = time.Now()
	f.wantRefused(t, "mallory", "pw", domain.ErrUnauthenticated)
	if d := time.Since(start); d >= cost/2 {
		t.Fatalf("repeated unknown pair answered after %v, want at once", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.auth.Authenticate(ctx, "mallory", []byte("other"), testRemote); !errors.Is(err, context.Canceled) {
		t.Fatalf("ended context: %v", err)
	}
	if c := f.matches(); c != 0 {
		t.Fatalf("%d password checks for an unknown user", c)
	}
}

// ensure that New refuses a missing dependency and Start a broken hasher.
func TestNewAndStartErrors(t *testing.T) {
	t.Parallel()
	store := fake.NewMetaStore()
	defer store.Close()
	h, c, a := fake.NewHasher(), fake.NewClock(startTime), &fake.Audit{}
	if _, err := authn.New(nil, store, h, c, a); !errors.Is(err, authn.ErrInvalidConfig) {
		t.Fatalf("nil users: %v", err)
	}
	if _, err := authn.New(store, store, h, c, nil); !errors.Is(err, authn.ErrInvalidConfig) {
		t.Fatalf("nil audit: %v", err)
	}
	auth, err := authn.New(store, store, h, c, a)
	if err != nil {
		t.Fatal(err)
	}
	defer auth.Close()
	h.FailNext(1)
	if err := auth.Start(); !errors.Is(err, fake.ErrFakeHasher) {
		t.Fatalf("Start with a failing hasher: %v", err)
	}
	if err := auth.Start(); err != nil {
		t.Fatal(err)
	}
}

// FuzzAuthenticate: whatever bytes arrive as username and password, the
// answer is a success for the right pair only, else 401 or 429; never a
// panic, never another error.
func FuzzAuthenticate(f *testing.F) {
	fx := newFixtureWith(f, setup{opts: []authn.Option{authn.WithVerifyEstimate(time.Microsecond)}})
	f.Add([]byte("alice"), []byte(alicePassword))
	f.Add([]byte("alice"), []byte("nope"))
	f.Add([]byte("mallory"), []byte("pw"))
	f.Add([]byte(""), []byte(""))
	f.Add([]byte("a\xff"), []byte(strings.Repeat("x", 80)))
	f.Add([]byte(strings.Repeat("b", 65)), []byte("pw"))
	f.Fuzz(func(t *testing.T, user, pw []byte) {
		u, err := fx.auth.Authenticate(context.Background(), string(user), pw, testRemote)
		if !isAuthErr(err) {
			t.Fatalf("%q/%q: unexpected error %v", user, pw, err)
		}
		right := string(user) == "alice" && string(pw) == alicePassword ||
			string(user) == "bob" && string(pw) == bobPassword
		if err == nil && (!right || u.Username != string(user) || u.PasswordHash != nil) {
			t.Fatalf("%q/%q: let in as %+v", user, pw, u)
		}
		if right && errors.Is(err, domain.ErrUnauthenticated) {
			t.Fatalf("%q: the right password was refused", user)
		}
	})
}

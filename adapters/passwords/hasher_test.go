package passwords_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/narad/narad/adapters/passwords"
)

// ensure that a hash matches its own password only, and is salted.
func TestHashMatches(t *testing.T) {
	t.Parallel()
	h := passwords.New()
	ctx := context.Background()
	pw := []byte("correct horse battery staple")
	hash, err := h.Hash(ctx, pw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(hash, pw) {
		t.Fatal("hash contains the password")
	}
	if ok, err := h.Matches(ctx, hash, pw); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, err := h.Matches(ctx, hash, []byte("correct horse battery stapler")); ok || err != nil {
		t.Fatalf("wrong password: %v %v, want false, nil", ok, err)
	}
	again, err := h.Hash(ctx, pw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(hash, again) {
		t.Fatal("two hashes of one password are equal: no salt")
	}
}

// ensure that new hashes use bcrypt at cost 10.
func TestHashCost(t *testing.T) {
	t.Parallel()
	hash, err := passwords.New().Hash(context.Background(), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := bcrypt.Cost(hash); err != nil || c != 10 {
		t.Fatalf("cost %d %v, want 10", c, err)
	}
}

// ensure that Hash refuses an empty or over-long password instead of
// truncating it, and takes exactly 72 bytes.
func TestHashRefusesBadLengths(t *testing.T) {
	t.Parallel()
	h := passwords.New()
	ctx := context.Background()
	for _, n := range []int{0, 73, 200} {
		if _, err := h.Hash(ctx, bytes.Repeat([]byte("a"), n)); !errors.Is(err, passwords.ErrPassword) {
			t.Errorf("%d bytes: %v, want ErrPassword", n, err)
		}
	}
	pw72 := bytes.Repeat([]byte("b"), 72)
	hash, err := h.Hash(ctx, pw72)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.Matches(ctx, hash, pw72); !ok || err != nil {
		t.Fatalf("72 bytes: %v %v", ok, err)
	}
	// A longer password sharing the first 72 bytes never matches.
	if ok, err := h.Matches(ctx, hash, append(pw72, 'c')); ok || err != nil {
		t.Fatalf("73 bytes against the 72-byte hash: %v %v, want false, nil", ok, err)
	}
}

// ensure that a malformed hash is an error, not a wrong password, whatever
// the password's length.
func TestMatchesMalformedHash(t *testing.T) {
	t.Parallel()
	h := passwords.New()
	ctx := context.Background()
	for _, hash := range []string{"", "x", "$2a$10$short", "fake:" + strings.Repeat("0", 64), "$9z$10$" + strings.Repeat("a", 53)} {
		for _, pw := range []string{"pw", strings.Repeat("p", 80)} {
			if ok, err := h.Matches(ctx, []byte(hash), []byte(pw)); ok || err == nil {
				t.Errorf("hash %q, %d-byte password: %v %v, want an error", hash, len(pw), ok, err)
			}
		}
	}
}

// ensure that an ended context is refused before any work.
func TestEndedContext(t *testing.T) {
	t.Parallel()
	h := passwords.New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Hash(ctx, []byte("pw")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Hash: %v", err)
	}
	hash, err := h.Hash(context.Background(), []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Matches(ctx, hash, []byte("pw")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Matches: %v", err)
	}
}

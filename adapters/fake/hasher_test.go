package fake_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/fake"
)

// ensure that the fake hasher tells right from wrong, refuses what bcrypt
// refuses, and counts its Matches calls.
func TestHasherContract(t *testing.T) {
	t.Parallel()
	h := fake.NewHasher()
	ctx := context.Background()
	hash, err := h.Hash(ctx, []byte("pw"))
	if err != nil || string(hash) != string(fake.FakeHash([]byte("pw"))) {
		t.Fatalf("hash %q %v", hash, err)
	}
	if ok, err := h.Matches(ctx, hash, []byte("pw")); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, err := h.Matches(ctx, hash, []byte("nope")); ok || err != nil {
		t.Fatalf("wrong password: %v %v", ok, err)
	}
	if _, err := h.Matches(ctx, []byte("$2a$garbage"), []byte("pw")); err == nil {
		t.Fatal("malformed hash accepted")
	}
	if _, err := h.Hash(ctx, make([]byte, 73)); err == nil {
		t.Fatal("73-byte password hashed")
	}
	if n := h.MatchesCalls(); n != 3 {
		t.Fatalf("%d Matches calls, want 3", n)
	}
	h.FailNext(1)
	if _, err := h.Matches(ctx, hash, []byte("pw")); !errors.Is(err, fake.ErrFakeHasher) {
		t.Fatalf("FailNext: %v", err)
	}
	if ok, err := h.Matches(ctx, hash, []byte("pw")); !ok || err != nil {
		t.Fatalf("after the failure: %v %v", ok, err)
	}
}

// ensure that Block holds Matches calls, Step lets one through and Unblock
// the rest.
func TestHasherGate(t *testing.T) {
	t.Parallel()
	h := fake.NewHasher()
	hash := fake.FakeHash([]byte("pw"))
	h.Block()
	var wg sync.WaitGroup
	done := make(chan bool, 3)
	for range 3 {
		wg.Go(func() {
			ok, _ := h.Matches(context.Background(), hash, []byte("pw"))
			done <- ok
		})
	}
	h.Step()
	if !<-done {
		t.Fatal("stepped call did not match")
	}
	if n := h.MostInFlight(); n < 1 {
		t.Fatalf("most in flight %d", n)
	}
	h.Unblock()
	wg.Wait()
	if h.InFlight() != 0 || h.MatchesCalls() != 3 {
		t.Fatalf("in flight %d, calls %d", h.InFlight(), h.MatchesCalls())
	}
}

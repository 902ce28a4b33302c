package authn_test

import (
	"context"
	"testing"
)

// BenchmarkAuthenticateCached is the hot path: a credential verified at
// the current users version (map lookup plus one HMAC-SHA256).
func BenchmarkAuthenticateCached(b *testing.B) {
	f := newFixture(b)
	f.wantLogin(b, "alice", alicePassword)
	pw := []byte(alicePassword)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := f.auth.Authenticate(ctx, "alice", pw, testRemote); err != nil {
			b.Fatal(err)
		}
	}
}

// ensure that a cache hit allocates at most once.
func TestCachedHitAllocations(t *testing.T) {
	f := newFixture(t)
	f.wantLogin(t, "alice", alicePassword)
	pw := []byte(alicePassword)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := f.auth.Authenticate(ctx, "alice", pw, testRemote); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("%.1f allocations per cache hit, want at most 1", allocs)
	}
}

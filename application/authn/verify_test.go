package authn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
)

// ensure that identical concurrent checks share one verification, and
// that only its leader spends a token.
func TestIdenticalChecksShareOneVerification(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 8
	for _, pw := range []string{alicePassword, "nope"} {
		f.hasher.Block()
		var wg sync.WaitGroup
		outs := make([]<-chan result, n)
		for i := range outs {
			outs[i] = f.goLogin(context.Background(), &wg, "alice", pw)
		}
		eventually(t, "every request waits for the check", func() bool { return f.auth.VerifyQueued() == n })
		f.hasher.Unblock()
		wg.Wait()
		for _, out := range outs {
			r := <-out
			if (pw == alicePassword) != (r.err == nil) || !isAuthErr(r.err) {
				t.Fatalf("password %q: %v", pw, r.err)
			}
		}
	}
	if c := f.matches(); c != 2 {
		t.Fatalf("%d password checks for two rounds of %d identical requests, want 2", c, n)
	}
	// The shared failure cost one token: four more fit.
	for i := range 4 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(4), domain.ErrAuthThrottled)
}

// ensure that a waiter whose context ends leaves with its error while the
// shared verification goes on for the others, whoever led it.
func TestWaiterLeavesWithoutFailingOthers(t *testing.T) {
	t.Parallel()
	for _, leaderLeaves := range []bool{false, true} {
		t.Run(fmt.Sprintf("leader_leaves=%v", leaderLeaves), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.hasher.Block()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			first, second := context.Background(), ctx
			if leaderLeaves {
				first, second = ctx, context.Background()
			}
			a := f.goLogin(first, &wg, "alice", alicePassword)
			eventually(t, "the leader's check runs", func() bool { return f.hasher.InFlight() == 1 })
			b := f.goLogin(second, &wg, "alice", alicePassword)
			eventually(t, "both wait", func() bool { return f.auth.VerifyQueued() == 2 })
			cancel()
			leaver, stayer := b, a
			if leaderLeaves {
				leaver, stayer = a, b
			}
			if r := <-leaver; !errors.Is(r.err, context.Canceled) {
				t.Fatalf("leaver: %v", r.err)
			}
			eventually(t, "one waits", func() bool { return f.auth.VerifyQueued() == 1 })
			f.hasher.Unblock()
			if r := <-stayer; r.err != nil || r.user.Username != "alice" {
				t.Fatalf("stayer: %+v", r)
			}
			wg.Wait()
			if c := f.matches(); c != 1 {
				t.Fatalf("%d password checks, want 1", c)
			}
		})
	}
}

// ensure that a check every caller abandoned before it began costs no
// token.
func TestAbandonedCheckRefunded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 4 {
		f.createUser(t, fmt.Sprintf("u%d", i), "pw", nil)
	}
	f.hasher.Block()
	var wg sync.WaitGroup
	for i := range 4 {
		f.goLogin(context.Background(), &wg, fmt.Sprintf("u%d", i), "pw")
	}
	eventually(t, "four checks hold the slots", func() bool { return f.hasher.InFlight() == 4 })
	ctx, cancel := context.WithCancel(context.Background())
	out := f.goLogin(ctx, &wg, "alice", "nope")
	eventually(t, "alice's check waits for a slot", func() bool { return f.auth.VerifyQueued() == 5 })
	cancel()
	if r := <-out; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("abandoned: %v", r.err)
	}
	f.hasher.Unblock()
	wg.Wait()
	for i := range 5 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(5), domain.ErrAuthThrottled)
	if c := f.matches(); c != 4+5 {
		t.Fatalf("%d password checks, want 9 (the abandoned one never ran)", c)
	}
}

// ensure that at most 4 verifications run at once.
func TestAtMostFourVerifications(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 10
	for i := range n {
		f.createUser(t, fmt.Sprintf("u%d", i), "pw", nil)
	}
	f.hasher.Block()
	var wg sync.WaitGroup
	outs := make([]<-chan result, n)
	for i := range outs {
		outs[i] = f.goLogin(context.Background(), &wg, fmt.Sprintf("u%d", i), "pw")
	}
	eventually(t, "every request is admitted", func() bool { return f.auth.VerifyQueued() == n })
	eventually(t, "four checks run", func() bool { return f.hasher.InFlight() == 4 })
	f.hasher.Unblock()
	wg.Wait()
	for _, out := range outs {
		if r := <-out; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if m := f.hasher.MostInFlight(); m != 4 {
		t.Fatalf("%d checks ran at once, want 4", m)
	}
}

// ensure that a check for a username with a full bucket runs ahead of one
// for a username with recent failures that waited longer.
func TestCleanAttemptsFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, name := range []string{"a0", "a1", "a2", "a3", "dirty", "clean"} {
		f.createUser(t, name, name+"-pw", nil)
	}
	f.wantRefused(t, "dirty", "nope", domain.ErrUnauthenticated)
	f.hasher.Block()
	var wg sync.WaitGroup
	for i := range 4 {
		f.goLogin(context.Background(), &wg, fmt.Sprintf("a%d", i), fmt.Sprintf("a%d-pw", i))
	}
	eventually(t, "four checks run", func() bool { return f.hasher.InFlight() == 4 })
	f.goLogin(context.Background(), &wg, "dirty", "dirty-pw")
	eventually(t, "dirty waits for a slot", func() bool { c, d := f.auth.SlotWaiters(); return c == 0 && d == 1 })
	f.goLogin(context.Background(), &wg, "clean", "clean-pw")
	eventually(t, "clean waits for a slot", func() bool { c, d := f.auth.SlotWaiters(); return c == 1 && d == 1 })
	before := f.hasher.MatchesCalls()
	f.hasher.Step() // one check ends: its slot goes to the next in line
	eventually(t, "the next check starts", func() bool { return f.hasher.MatchesCalls() == before+1 })
	hashes := f.hasher.MatchedHashes()
	if got, want := hashes[len(hashes)-1], string(fake.FakeHash([]byte("clean-pw"))); got != want {
		t.Fatalf("next check is of %s, want the clean user's", got)
	}
	f.hasher.Unblock()
	wg.Wait()
}

// ensure that an unreadable user store answers ErrAuthUnavailable, and a
// failing hasher too, without spending a token.
func TestUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.users.fail.Store(true)
	f.wantRefused(t, "alice", alicePassword, domain.ErrAuthUnavailable)
	f.users.fail.Store(false)
	for range 6 {
		f.hasher.FailNext(1)
		f.wantRefused(t, "alice", "nope", domain.ErrAuthUnavailable)
	}
	for i := range 5 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(5), domain.ErrAuthThrottled)
}

// ensure that Close ends a queued check with ErrAuthUnavailable, leaves no
// goroutine, and is idempotent.
func TestCloseDuringCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.hasher.Block()
	defer f.hasher.Unblock()
	var wg sync.WaitGroup
	out := f.goLogin(context.Background(), &wg, "alice", alicePassword)
	eventually(t, "the check waits", func() bool { return f.hasher.InFlight() == 1 })
	f.auth.Close()
	f.auth.Close()
	if r := <-out; !errors.Is(r.err, domain.ErrAuthUnavailable) {
		t.Fatalf("after Close: %v", r.err)
	}
	wg.Wait()
	f.wantRefused(t, "alice", alicePassword, domain.ErrAuthUnavailable)
	if err := f.auth.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

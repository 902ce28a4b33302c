package authn_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that six quick requests with six different wrong passwords answer
// 401 five times, then 429 (conformance line 13), that the right password
// is throttled too without a check, and that one token refills after 12 s.
func TestUserBucket(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 5 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(5), domain.ErrAuthThrottled)
	f.wantRefused(t, "alice", alicePassword, domain.ErrAuthThrottled)
	if n := f.matches(); n != 5 {
		t.Fatalf("%d password checks, want 5 (none while throttled)", n)
	}
	f.clock.Advance(11 * time.Second)
	f.wantRefused(t, "alice", alicePassword, domain.ErrAuthThrottled)
	f.clock.Advance(time.Second)
	f.wantLogin(t, "alice", alicePassword)
	// The success gave its token back: one more failure fits, then 429.
	f.wantRefused(t, "alice", wrong(6), domain.ErrUnauthenticated)
	f.wantRefused(t, "alice", wrong(7), domain.ErrAuthThrottled)
	// Other users are not affected.
	f.wantLogin(t, "bob", bobPassword)
}

// ensure that a credential already verified keeps working while its
// user's bucket is empty.
func TestCachedCredentialWorksWhileThrottled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.wantLogin(t, "alice", alicePassword)
	for i := range 5 {
		f.wantRefused(t, "alice", wrong(i), domain.ErrUnauthenticated)
	}
	f.wantRefused(t, "alice", wrong(5), domain.ErrAuthThrottled)
	checks := f.matches()
	f.wantLogin(t, "alice", alicePassword)
	if f.matches() != checks {
		t.Fatal("the cached credential was checked again")
	}
}

// ensure that an unknown username is refused with 401 however often, never
// 429, and never costs a password check.
func TestUnknownUserNeverThrottled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 20 {
		f.wantRefused(t, "mallory", wrong(i), domain.ErrUnauthenticated)
	}
	for range 20 {
		f.wantRefused(t, "mallory", "same", domain.ErrUnauthenticated)
	}
	if n := f.matches(); n != 0 {
		t.Fatalf("%d password checks for an unknown user", n)
	}
	if n := f.audit.Count(ports.AuditAuthThrottled); n != 0 {
		t.Fatalf("%d throttle lines", n)
	}
}

// ensure the node-wide failure budget: first failures of 32 users drain
// it; then a user with recent failures is refused at once without a
// check (even with the right password, logged once per 10 s), a user
// without failures never is, and a correct password gives its token back.
func TestFailureBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 34 {
		f.createUser(t, fmt.Sprintf("u%02d", i), "pw", nil)
	}
	for i := range 33 { // u32's first failure finds the budget empty but is not refused
		f.wantRefused(t, fmt.Sprintf("u%02d", i), "nope", domain.ErrUnauthenticated)
	}
	checks := f.matches()
	f.wantRefused(t, "u00", "nope-2", domain.ErrAuthThrottled)
	f.wantRefused(t, "u01", "pw", domain.ErrAuthThrottled)
	if f.matches() != checks {
		t.Fatal("a budget refusal ran a password check")
	}
	if n := budgetLines(f); n != 1 {
		t.Fatalf("%d budget audit lines for two refusals within 10 s, want 1", n)
	}
	f.wantLogin(t, "u33", "pw") // no recent failures: never refused
	f.wantLogin(t, "alice", alicePassword)

	f.clock.Advance(250 * time.Millisecond) // one budget token
	f.wantLogin(t, "u00", "pw")             // takes it and gives it back
	f.wantRefused(t, "u01", "nope-2", domain.ErrUnauthenticated)
	f.wantRefused(t, "u02", "nope-2", domain.ErrAuthThrottled)
}

func budgetLines(f *fixture) int {
	n := 0
	for _, e := range f.audit.Events() {
		if e.Event == ports.AuditAuthThrottled && strings.Contains(e.Reason, "budget") {
			n++
		}
	}
	return n
}

// ensure that failures and throttles are audited with the username and
// remote address, and never the password.
func TestAuditLines(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 6 {
		_, _ = f.login("alice", wrong(i))
	}
	_, _ = f.login("alice", wrong(7))
	_, _ = f.login("mallory", "whatever")
	if n := f.audit.Count(ports.AuditAuthFailed); n != 5 {
		t.Fatalf("%d auth.failed lines, want 5", n)
	}
	if n := f.audit.Count(ports.AuditAuthThrottled); n != 1 {
		t.Fatalf("%d auth.throttled lines, want 1 (rate-limited per user)", n)
	}
	for _, e := range f.audit.Events() {
		if e.Actor != "alice" || e.Remote != testRemote || e.Outcome != ports.AuditRefused {
			t.Errorf("audit line %+v", e)
		}
		if line := fmt.Sprintf("%+v", e); strings.Contains(line, "wrong-") {
			t.Errorf("audit line repeats a password: %s", line)
		}
	}
}

package users_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const remote = "192.0.2.10:4444"

// Ensure that an admin changes another account's password without the
// current one, that only the hash changes (grants untouched, api.md §2.16),
// and that no audit line holds either password or hash.
func TestSetPasswordByAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := f.user(t, "alice")
	f.clock.Advance(time.Second)
	err := f.svc.SetPassword(context.Background(), f.principal(t, "ops"), "alice", users.PasswordChange{New: "new-pw-9", Remote: remote})
	if err != nil {
		t.Fatal(err)
	}
	after := f.user(t, "alice")
	if !f.passwordIs(t, "alice", "new-pw-9") || !reflect.DeepEqual(after.Grants, before.Grants) ||
		after.UpdatedAtMs != startTime.Add(time.Second).UnixMilli() {
		t.Fatalf("after %+v", after)
	}
	if len(f.creds.Calls()) != 0 {
		t.Fatal("an admin's change checked a current password")
	}
	if e := f.lastEntry(t); e.Type != meta.TypeSetUserPassword || e.Actor != "ops" {
		t.Fatalf("entry %+v", e)
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserPassword, Actor: "ops", Subject: "user alice",
		Outcome: ports.AuditOK, Remote: remote})
	f.wantNoSecretAudited(t, "new-pw-9", alicePassword, string(after.PasswordHash), string(before.PasswordHash))
}

// Ensure that a password change's refusals come in the route table's order:
// neither self nor admin, new_password rules, not found, root's password by
// another (invariant 3).
func TestSetPasswordRefusalsInOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, caller, target, pw string
		err                      error
		msg                      string
	}{
		{"neither self nor admin", "alice", "ops", "", domain.ErrForbidden, access.MsgPasswordOthers},
		{"neither self nor admin, missing target", "alice", "nobody", "p", domain.ErrForbidden, access.MsgPasswordOthers},
		{"new_password required", "ops", "nobody", "", domain.ErrInvalidArgument, "new_password required"},
		{"new_password over 72 bytes", "alice", "alice", strings.Repeat("p", 73), domain.ErrInvalidArgument,
			"new_password must be at most 72 bytes"},
		{"not found", "ops", "nobody", "p", domain.ErrUserNotFound, ""},
		{"root's by a non-root admin", "ops", "admin", "p", domain.ErrForbidden, access.MsgRootPassword},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			before := f.meta.AppliedIndex()
			err := f.svc.SetPassword(context.Background(), f.principal(t, c.caller), c.target, users.PasswordChange{New: c.pw})
			wantRefusal(t, err, c.err, c.msg)
			if f.meta.AppliedIndex() != before || f.hasher.Hashes() != 3 {
				t.Fatal("a refused change hashed or proposed")
			}
			reason := c.msg
			if reason == "" {
				reason = "not found"
			}
			f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserPassword, Actor: c.caller, Subject: "user " + c.target,
				Outcome: ports.AuditRefused, Reason: reason})
		})
	}
}

// Ensure that only root, or security off acting as root, changes root's
// password, and that root's grants and flag survive it.
func TestSetPasswordOfRoot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if err := f.svc.SetPassword(ctx, f.principal(t, "admin"), "admin", users.PasswordChange{New: "r2"}); err != nil {
		t.Fatalf("root: %v", err)
	}
	if err := f.svc.SetPassword(ctx, access.Open("10.0.0.3:3"), "admin", users.PasswordChange{New: "r3"}); err != nil {
		t.Fatalf("security off: %v", err)
	}
	if u := f.user(t, "admin"); !f.passwordIs(t, "admin", "r3") || !u.Root || !reflect.DeepEqual(u.Grants, admin()) {
		t.Fatalf("root after: %+v", u)
	}
	if len(f.creds.Calls()) != 0 {
		t.Fatal("root's change checked a current password")
	}
}

// Ensure that an admin changing their own password needs no current one.
func TestSetPasswordOwnByAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if err := f.svc.SetPassword(context.Background(), f.principal(t, "ops"), "ops", users.PasswordChange{New: "o2"}); err != nil {
		t.Fatal(err)
	}
	if !f.passwordIs(t, "ops", "o2") || len(f.creds.Calls()) != 0 {
		t.Fatal("own change by an admin")
	}
}

// Ensure that a non-admin's self-service change needs the right current
// password, checked through the authenticator with the client's address: a
// missing or wrong one is 403 "current password is incorrect" and changes
// nothing.
func TestSetPasswordSelfService(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	alice := f.principal(t, "alice")
	grants := f.user(t, "alice").Grants
	for _, current := range []string{"", "wrong", strings.Repeat("w", 73)} {
		before := f.meta.AppliedIndex()
		err := f.svc.SetPassword(ctx, alice, "alice", users.PasswordChange{New: "a2", Current: current, Remote: remote})
		wantRefusal(t, err, domain.ErrForbidden, access.MsgCurrentIncorrect)
		if f.meta.AppliedIndex() != before || !f.passwordIs(t, "alice", alicePassword) {
			t.Fatalf("current %q: the change went through", current)
		}
		f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserPassword, Actor: "alice", Subject: "user alice",
			Outcome: ports.AuditRefused, Reason: access.MsgCurrentIncorrect, Remote: remote})
	}
	if calls := f.creds.Calls(); !reflect.DeepEqual(calls, []checkCall{{"alice", "wrong", remote}}) {
		t.Fatalf("checker calls %+v: a missing or impossible current password is never checked", calls)
	}
	if err := f.svc.SetPassword(ctx, alice, "alice", users.PasswordChange{New: "a2", Current: alicePassword, Remote: remote}); err != nil {
		t.Fatal(err)
	}
	if !f.passwordIs(t, "alice", "a2") || !reflect.DeepEqual(f.user(t, "alice").Grants, grants) {
		t.Fatalf("after: %+v", f.user(t, "alice"))
	}
	f.wantNoSecretAudited(t, "a2", "wrong", alicePassword)
}

// Ensure that a throttled check passes through as ErrAuthThrottled (429)
// and changes nothing.
func TestSetPasswordThrottled(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.creds.Throttle(true)
	before := f.meta.AppliedIndex()
	err := f.svc.SetPassword(context.Background(), f.principal(t, "alice"), "alice",
		users.PasswordChange{New: "a2", Current: alicePassword, Remote: remote})
	wantRefusal(t, err, domain.ErrAuthThrottled, "")
	if f.meta.AppliedIndex() != before {
		t.Fatal("a throttled change proposed")
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserPassword, Actor: "alice", Subject: "user alice",
		Outcome: ports.AuditRefused, Reason: "too many failed authentication attempts", Remote: remote})
}

// Ensure that the state machine's not-found maps to 404 when the account
// went between the read and the proposal, and that a failed proposal
// answers 503.
func TestSetPasswordRaceAndNoLeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.store.beforePropose = func() { f.commit(t, &meta.DeleteUser{Username: "alice"}) }
	err := f.svc.SetPassword(context.Background(), f.principal(t, "ops"), "alice", users.PasswordChange{New: "x"})
	wantRefusal(t, err, domain.ErrUserNotFound, "")

	g := newFixture(t)
	g.meta.FailPropose(fmt.Errorf("no leader: %w", meta.ErrUnavailable))
	err = g.svc.SetPassword(context.Background(), g.principal(t, "ops"), "alice", users.PasswordChange{New: "x"})
	wantRefusal(t, err, domain.ErrUnavailable, "")
}

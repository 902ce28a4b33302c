package users_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Ensure that a grants update replaces the whole set, answers the account
// as read back (no hash), stamps updated_at_ms, and never touches the hash
// (field-scoped, api.md §2.16).
func TestSetGrantsReplacesOnlyGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	hash := f.user(t, "alice").PasswordHash
	f.clock.Advance(time.Hour)
	want := []meta.Grant{{Action: access.ActionConsume, Patterns: []string{"billing"}}, {Action: access.ActionCreate, Patterns: []string{"team-*"}}}
	got, err := f.svc.SetGrants(context.Background(), f.principal(t, "ops"), "alice", want)
	if err != nil {
		t.Fatal(err)
	}
	if got.PasswordHash != nil || !reflect.DeepEqual(got.Grants, want) || got.UpdatedAtMs != startTime.Add(time.Hour).UnixMilli() ||
		got.CreatedAtMs != startTime.UnixMilli() {
		t.Fatalf("answer %+v", got)
	}
	if u := f.user(t, "alice"); !bytes.Equal(u.PasswordHash, hash) || !reflect.DeepEqual(u.Grants, want) {
		t.Fatalf("stored %+v", u)
	}
	if e := f.lastEntry(t); e.Type != meta.TypeSetUserGrants || e.Actor != "ops" {
		t.Fatalf("entry %+v", e)
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserGrants, Actor: "ops", Subject: "user alice", Outcome: ports.AuditOK})

	got, err = f.svc.SetGrants(context.Background(), f.principal(t, "ops"), "alice", []meta.Grant{})
	if err != nil || len(got.Grants) != 0 || len(f.user(t, "alice").Grants) != 0 {
		t.Fatalf("empty set: %+v %v", got, err)
	}
}

// Ensure that a grants update's refusals come in the route table's order:
// admin, grant rules, own grants, conferring admin, not found, root's
// grants (invariants 1-3).
func TestSetGrantsRefusalsInOrder(t *testing.T) {
	t.Parallel()
	bad := []meta.Grant{{Action: "x"}}
	cases := []struct {
		name, caller, target string
		grants               []meta.Grant
		err                  error
		msg                  string
	}{
		{"non-admin", "alice", "alice", bad, domain.ErrForbidden, access.MsgAdminRequired},
		{"grant rule before own grants", "ops", "ops", bad, domain.ErrInvalidArgument, `unknown grant action "x"`},
		{"grant rule before not found", "ops", "nobody", produce(), domain.ErrInvalidArgument,
			`grant "produce" requires at least one topic pattern`},
		{"own grants", "ops", "ops", produce("a"), domain.ErrForbidden, access.MsgOwnGrants},
		{"own grants before confer", "ops", "ops", admin(), domain.ErrForbidden, access.MsgOwnGrants},
		{"root's own grants", "admin", "admin", admin(), domain.ErrForbidden, access.MsgOwnGrants},
		{"confer before not found", "ops", "nobody", admin(), domain.ErrForbidden, access.MsgConferAdmin},
		{"non-root admin confers admin", "ops", "alice", admin(), domain.ErrForbidden, access.MsgConferAdmin},
		{"not found", "ops", "nobody", produce("a"), domain.ErrUserNotFound, ""},
		{"demote root", "ops", "admin", []meta.Grant{}, domain.ErrForbidden, access.MsgRootGrants},
		{"scope root", "ops", "admin", produce("a"), domain.ErrForbidden, access.MsgRootGrants},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			before := f.meta.AppliedIndex()
			_, err := f.svc.SetGrants(context.Background(), f.principal(t, c.caller), c.target, c.grants)
			wantRefusal(t, err, c.err, c.msg)
			if f.meta.AppliedIndex() != before {
				t.Fatal("a refused update proposed")
			}
			reason := c.msg
			if reason == "" {
				reason = "not found"
			}
			f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserGrants, Actor: c.caller, Subject: "user " + c.target,
				Outcome: ports.AuditRefused, Reason: reason})
		})
	}
}

// Ensure that root, and security off acting as root, may confer admin
// through a grants update, while root's own grants stay immutable to both.
func TestSetGrantsRootConfersAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.SetGrants(ctx, f.principal(t, "admin"), "alice", admin()); err != nil {
		t.Fatalf("root: %v", err)
	}
	if !f.principal(t, "alice").Admin() {
		t.Fatal("alice is not admin")
	}
	open := access.Open("10.0.0.2:1")
	if _, err := f.svc.SetGrants(ctx, open, "ops", produce("x")); err != nil {
		t.Fatalf("security off demoting ops: %v", err)
	}
	if _, err := f.svc.SetGrants(ctx, open, "ops", admin()); err != nil {
		t.Fatalf("security off conferring admin: %v", err)
	}
	_, err := f.svc.SetGrants(ctx, open, "admin", produce("x"))
	wantRefusal(t, err, domain.ErrForbidden, access.MsgRootGrants)
	if u := f.user(t, "admin"); !u.Root || !reflect.DeepEqual(u.Grants, admin()) {
		t.Fatalf("root after: %+v", u)
	}
}

// Ensure that the state machine's refusals map to the same errors when the
// account changed between the read and the proposal.
func TestSetGrantsRaceRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.store.beforePropose = func() { f.commit(t, &meta.DeleteUser{Username: "alice"}) }
	_, err := f.svc.SetGrants(context.Background(), f.principal(t, "ops"), "alice", produce("a"))
	wantRefusal(t, err, domain.ErrUserNotFound, "")

	g := newEmptyFixture(t)
	g.propose(t, &meta.CreateUser{Username: "ops", PasswordHash: g.hash(t, "p"), Grants: admin()})
	g.propose(t, &meta.CreateUser{Username: access.RootUsername, PasswordHash: g.hash(t, "p")})
	g.store.beforePropose = func() {
		g.commit(t, &meta.DeleteUser{Username: access.RootUsername})
		g.commit(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: g.hash(t, "q")})
	}
	_, err = g.svc.SetGrants(context.Background(), g.principal(t, "ops"), access.RootUsername, produce("a"))
	wantRefusal(t, err, domain.ErrForbidden, access.MsgRootGrants)
}

// Ensure that a failed grants proposal answers 503.
func TestSetGrantsNoLeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.FailPropose(fmt.Errorf("busy: %w", meta.ErrUnavailable))
	_, err := f.svc.SetGrants(context.Background(), f.principal(t, "ops"), "alice", produce("a"))
	wantRefusal(t, err, domain.ErrUnavailable, "")
}

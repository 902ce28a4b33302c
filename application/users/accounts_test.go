package users_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/narad/narad/application/users"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Ensure that the list holds every account by username, none with a hash,
// root marked, and is an empty array (not nil) without accounts.
func TestListOrderedWithoutHashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.Create(ctx, f.principal(t, "admin"), users.CreateRequest{Username: "Zed", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.List(ctx, f.principal(t, "ops"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range got {
		if u.PasswordHash != nil {
			t.Fatalf("%s answered with its hash", u.Username)
		}
		names = append(names, u.Username)
	}
	if strings.Join(names, ",") != "Zed,admin,alice,ops" || !got[1].Root || got[2].Root {
		t.Fatalf("list %+v", got)
	}
	empty, err := newEmptyFixture(t).svc.List(ctx, access.Open("10.0.0.1:1"))
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("empty list %#v %v", empty, err)
	}
}

// Ensure that get answers one account without its hash, 404 for a missing
// one, and that both reads need admin (even for a missing name).
func TestGet(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	got, err := f.svc.Get(ctx, f.principal(t, "ops"), "alice")
	if err != nil || got.PasswordHash != nil || got.Username != "alice" || len(got.Grants) != 1 || got.CreatedAtMs == 0 {
		t.Fatalf("get %+v %v", got, err)
	}
	_, err = f.svc.Get(ctx, f.principal(t, "ops"), "nobody")
	wantRefusal(t, err, domain.ErrUserNotFound, "")
	_, err = f.svc.Get(ctx, f.principal(t, "alice"), "nobody")
	wantRefusal(t, err, domain.ErrForbidden, access.MsgAdminRequired)
	_, err = f.svc.Get(ctx, f.principal(t, "alice"), "alice")
	wantRefusal(t, err, domain.ErrForbidden, access.MsgAdminRequired)
	_, err = f.svc.List(ctx, f.principal(t, "alice"))
	wantRefusal(t, err, domain.ErrForbidden, access.MsgAdminRequired)
}

// Ensure that a delete removes the account, clears the owner of every topic
// it owned (entry type 32) and leaves other owners alone.
func TestDeleteReleasesTopics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tp := range []struct{ name, owner string }{{"a", "alice"}, {"b", "ops"}, {"c", "alice"}} {
		f.propose(t, &meta.CreateTopic{Name: tp.name, ID: "00000000000000a" + tp.name[:1], Partitions: 3,
			VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1, Owner: tp.owner})
	}
	if err := f.svc.Delete(context.Background(), f.principal(t, "ops"), "alice"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := f.meta.User("alice"); ok {
		t.Fatal("alice still exists")
	}
	if e := f.lastEntry(t); e.Type != meta.TypeDeleteUserReleaseTopics || e.Actor != "ops" {
		t.Fatalf("entry %+v", e)
	}
	for name, owner := range map[string]string{"a": "", "b": "ops", "c": ""} {
		if tp, _, _ := f.meta.Topic(name); tp.Owner != owner {
			t.Fatalf("topic %s owner %q, want %q", name, tp.Owner, owner)
		}
	}
	f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserDelete, Actor: "ops", Subject: "user alice", Outcome: ports.AuditOK})
}

// Ensure that a delete's refusals come in the route table's order: admin,
// not found, root undeletable, own account (invariants 3 and 4).
func TestDeleteRefusalsInOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, caller, target string
		err                  error
		msg                  string
	}{
		{"non-admin", "alice", "nobody", domain.ErrForbidden, access.MsgAdminRequired},
		{"non-admin self", "alice", "alice", domain.ErrForbidden, access.MsgAdminRequired},
		{"missing", "ops", "nobody", domain.ErrUserNotFound, ""},
		{"root by admin", "ops", "admin", domain.ErrForbidden, access.MsgRootDelete},
		{"root by root", "admin", "admin", domain.ErrForbidden, access.MsgRootDelete},
		{"self", "ops", "ops", domain.ErrForbidden, access.MsgOwnAccount},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			before := f.meta.AppliedIndex()
			err := f.svc.Delete(context.Background(), f.principal(t, c.caller), c.target)
			wantRefusal(t, err, c.err, c.msg)
			if f.meta.AppliedIndex() != before {
				t.Fatal("a refused delete proposed")
			}
			reason := c.msg
			if reason == "" {
				reason = "not found"
			}
			f.wantAudit(t, ports.AuditEvent{Event: ports.AuditUserDelete, Actor: c.caller, Subject: "user " + c.target,
				Outcome: ports.AuditRefused, Reason: reason})
		})
	}
}

// Ensure that security off acts as root: it cannot delete root either, but
// deletes any other account (it has no account of its own).
func TestDeleteSecurityOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	open := access.Open("10.0.0.9:9")
	wantRefusal(t, f.svc.Delete(context.Background(), open, "admin"), domain.ErrForbidden, access.MsgRootDelete)
	if err := f.svc.Delete(context.Background(), open, "ops"); err != nil {
		t.Fatal(err)
	}
}

// Ensure that the state machine's refusals map to the same errors when the
// account changed between the read and the proposal: gone (404), or now
// the root account (403).
func TestDeleteRaceRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.store.beforePropose = func() { f.commit(t, &meta.DeleteUser{Username: "alice"}) }
	wantRefusal(t, f.svc.Delete(context.Background(), f.principal(t, "ops"), "alice"), domain.ErrUserNotFound, "")

	g := newEmptyFixture(t)
	g.propose(t, &meta.CreateUser{Username: "ops", PasswordHash: g.hash(t, "p"), Grants: admin()})
	g.propose(t, &meta.CreateUser{Username: access.RootUsername, PasswordHash: g.hash(t, "p")})
	g.store.beforePropose = func() {
		g.commit(t, &meta.DeleteUser{Username: access.RootUsername})
		g.commit(t, &meta.SeedRootUser{Username: access.RootUsername, PasswordHash: g.hash(t, "q")})
	}
	err := g.svc.Delete(context.Background(), g.principal(t, "ops"), access.RootUsername)
	wantRefusal(t, err, domain.ErrForbidden, access.MsgRootDelete)
}

// Ensure that a failed delete proposal answers 503 and is audited as
// failed.
func TestDeleteNoLeader(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.FailPropose(fmt.Errorf("timeout: %w", meta.ErrUnavailable))
	wantRefusal(t, f.svc.Delete(context.Background(), f.principal(t, "ops"), "alice"), domain.ErrUnavailable, "")
	if a := f.lastAudit(t); a.Outcome != ports.AuditFailed {
		t.Fatalf("audit %+v", a)
	}
}

// Ensure that a replica that cannot be read answers 503 for a stopped
// replica and an internal error otherwise, never a 404.
func TestReadFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ops := f.principal(t, "ops")
	ctx := context.Background()
	f.store.readErr = fmt.Errorf("closing: %w", meta.ErrStopped)
	_, err := f.svc.Get(ctx, ops, "alice")
	wantRefusal(t, err, domain.ErrUnavailable, "")
	_, err = f.svc.List(ctx, ops)
	wantRefusal(t, err, domain.ErrUnavailable, "")
	wantRefusal(t, f.svc.Delete(ctx, ops, "alice"), domain.ErrUnavailable, "")

	broken := errors.New("disk read failed")
	f.store.readErr = broken
	_, err = f.svc.Get(ctx, ops, "alice")
	var r *domain.Refusal
	if !errors.Is(err, broken) || errors.As(err, &r) {
		t.Fatalf("storage error: %v", err)
	}
}

package access_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
)

var (
	rootUser = meta.User{Username: "admin", Root: true, Grants: []meta.Grant{{Action: "admin"}}}
	opsUser  = meta.User{Username: "ops", Grants: []meta.Grant{{Action: "admin"}}}
	erinUser = meta.User{Username: "erin", Grants: []meta.Grant{{Action: "produce", Patterns: []string{"x"}}}}
	root     = access.FromUser(rootUser)
	ops      = access.FromUser(opsUser)
	erin     = access.FromUser(erinUser)
	open     = access.Open("127.0.0.1")
	adminG   = []meta.Grant{{Action: "admin"}}
	scoped   = []meta.Grant{{Action: "consume", Patterns: []string{"a*"}}}
)

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	var r *domain.Refusal
	if !errors.As(err, &r) || !errors.Is(err, domain.ErrForbidden) || r.Detail != msg {
		t.Fatalf("got %v, want 403 %q", err, msg)
	}
}

// ensure that only root (or security off, which acts as root) confers
// admin, and any admin confers scoped grants (invariant 1).
func TestCheckConfer(t *testing.T) {
	wantForbidden(t, access.CheckConfer(ops, adminG), access.MsgConferAdmin)
	for _, p := range []access.Principal{root, open} {
		if err := access.CheckConfer(p, adminG); err != nil {
			t.Fatalf("%s conferring admin: %v", p.Name, err)
		}
	}
	if err := access.CheckConfer(ops, scoped); err != nil {
		t.Fatalf("non-root admin conferring a scoped grant: %v", err)
	}
}

// ensure that nobody edits their own grants, root's grants never change,
// and security off has no "own" account (invariants 2, 3).
func TestGrantsEdit(t *testing.T) {
	wantForbidden(t, access.CheckGrantsEdit(ops, "ops", scoped), access.MsgOwnGrants)
	wantForbidden(t, access.CheckGrantsEdit(root, "admin", adminG), access.MsgOwnGrants)
	wantForbidden(t, access.CheckGrantsEdit(ops, "erin", adminG), access.MsgConferAdmin)
	if err := access.CheckGrantsEdit(open, "127.0.0.1", scoped); err != nil {
		t.Fatalf("security off: %v", err)
	}
	wantForbidden(t, access.CheckGrantsTarget(rootUser), access.MsgRootGrants)
	if err := access.CheckGrantsTarget(erinUser); err != nil {
		t.Fatal(err)
	}
}

// ensure that root is undeletable and nobody deletes their own account
// (invariants 3, 4).
func TestCheckDelete(t *testing.T) {
	wantForbidden(t, access.CheckDelete(ops, rootUser), access.MsgRootDelete)
	wantForbidden(t, access.CheckDelete(open, rootUser), access.MsgRootDelete)
	wantForbidden(t, access.CheckDelete(ops, opsUser), access.MsgOwnAccount)
	if err := access.CheckDelete(ops, erinUser); err != nil {
		t.Fatal(err)
	}
}

// ensure that a password is changed by its user (a non-admin proving the
// current one) or an admin, and root's only by root (invariant 3).
func TestPasswordChange(t *testing.T) {
	if need, err := access.PasswordChange(erin, "erin"); err != nil || !need {
		t.Fatalf("self-service: need=%v err=%v", need, err)
	}
	if need, err := access.PasswordChange(ops, "ops"); err != nil || need {
		t.Fatalf("admin on self: need=%v err=%v", need, err)
	}
	if need, err := access.PasswordChange(ops, "erin"); err != nil || need {
		t.Fatalf("admin on another: need=%v err=%v", need, err)
	}
	_, err := access.PasswordChange(erin, "ops")
	wantForbidden(t, err, access.MsgPasswordOthers)
	wantForbidden(t, access.CheckPasswordTarget(ops, rootUser), access.MsgRootPassword)
	for _, p := range []access.Principal{root, open} {
		if err := access.CheckPasswordTarget(p, rootUser); err != nil {
			t.Fatalf("%s on root's password: %v", p.Name, err)
		}
	}
}

// ensure that the username, password and grant rules answer 400 with the
// spec's messages (conformance 135, 227, 228).
func TestAccountInputRules(t *testing.T) {
	bad := map[string]error{
		"username empty":   access.ValidUsername(""),
		"username dot":     access.ValidUsername("."),
		"username dotdot":  access.ValidUsername(".."),
		"username space":   access.ValidUsername("bad name"),
		"username 65":      access.ValidUsername(strings.Repeat("u", 65)),
		"username utf8":    access.ValidUsername("ünï"),
		"password missing": access.ValidPassword("password", ""),
		"password 73":      access.ValidPassword("password", strings.Repeat("p", 73)),
		"password 73 utf8": access.ValidPassword("new_password", strings.Repeat("é", 36)+"p"),
	}
	for name, err := range bad {
		if !errors.Is(err, domain.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := access.ValidUsername(strings.Repeat("u", 64)); err != nil {
		t.Fatal(err)
	}
	if err := access.ValidPassword("password", strings.Repeat("p", 72)); err != nil {
		t.Fatal(err)
	}
	grants := map[string]struct {
		g   meta.Grant
		msg string
	}{
		"no pattern":    {meta.Grant{Action: "produce"}, `grant "produce" requires at least one topic pattern`},
		"empty pattern": {meta.Grant{Action: "produce", Patterns: []string{""}}, `grant "produce" has an empty pattern`},
		"bad pattern":   {meta.Grant{Action: "produce", Patterns: []string{"a b"}}, `grant "produce" pattern "a b" must be a topic name with an optional trailing '*'`},
		"inner star":    {meta.Grant{Action: "consume", Patterns: []string{"a*b"}}, `grant "consume" pattern "a*b" must be a topic name with an optional trailing '*'`},
		"admin pattern": {meta.Grant{Action: "admin", Patterns: []string{"x"}}, "admin grants are global and must not carry patterns"},
		"superuser":     {meta.Grant{Action: "superuser"}, `unknown grant action "superuser"`},
	}
	for name, c := range grants {
		var r *domain.Refusal
		err := access.ValidGrants([]meta.Grant{c.g})
		if !errors.As(err, &r) || !errors.Is(err, domain.ErrInvalidArgument) || r.Detail != c.msg {
			t.Errorf("%s: got %v, want %q", name, err, c.msg)
		}
	}
	if err := access.ValidGrants([]meta.Grant{{Action: "create", Patterns: []string{"*", "orders-*", "x"}}, {Action: "admin"}}); err != nil {
		t.Fatal(err)
	}
}

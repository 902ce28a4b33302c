package access

import (
	"fmt"
	"strings"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Account limits (api.md §0.6).
const (
	// PasswordMaxBytes is bcrypt's input limit: longer passwords are refused,
	// never silently cut.
	PasswordMaxBytes = 72
	// RootUsername is the account seeded at a cluster's first start.
	RootUsername = "admin"
)

// The 403 messages of user management (api.md §2.16, §4.5).
const (
	MsgConferAdmin      = "cannot grant permissions you do not hold"
	MsgOwnGrants        = "cannot modify your own grants"
	MsgRootGrants       = "the root admin's grants are immutable"
	MsgRootDelete       = "the root admin cannot be deleted"
	MsgOwnAccount       = "cannot delete your own account"
	MsgPasswordOthers   = "admin required"
	MsgRootPassword     = "only the root admin may change the root password"
	MsgCurrentIncorrect = "current password is incorrect"
)

// self reports whether name is p's own account (never with security off).
func (p Principal) self(name string) bool { return p.Secured() && p.Name == name }

// CheckConfer enforces invariant 1: only root confers admin; any admin may
// confer scoped grants.
func CheckConfer(p Principal, grants []meta.Grant) error {
	for _, g := range grants {
		if g.Action == ActionAdmin && !p.Root() {
			return forbid(MsgConferAdmin)
		}
	}
	return nil
}

// CheckGrantsEdit enforces invariant 2 (nobody edits their own grants) and
// invariant 1 for a grants replacement of target by admin p; call it before
// looking target up.
func CheckGrantsEdit(p Principal, target string, grants []meta.Grant) error {
	if p.self(target) {
		return forbid(MsgOwnGrants)
	}
	return CheckConfer(p, grants)
}

// CheckGrantsTarget enforces invariant 3: root's grants are immutable.
func CheckGrantsTarget(target meta.User) error {
	if target.Root {
		return forbid(MsgRootGrants)
	}
	return nil
}

// CheckDelete enforces invariants 3 and 4 for admin p deleting target:
// root is undeletable, nobody deletes their own account.
func CheckDelete(p Principal, target meta.User) error {
	switch {
	case target.Root:
		return forbid(MsgRootDelete)
	case p.self(target.Username):
		return forbid(MsgOwnAccount)
	}
	return nil
}

// PasswordChange decides who may change target's password before it is
// looked up: the user themself or an admin. needCurrent is true for
// self-service by a non-admin, who must prove the current password.
func PasswordChange(p Principal, target string) (needCurrent bool, err error) {
	switch {
	case p.Admin():
		return false, nil
	case p.self(target):
		return true, nil
	}
	return false, forbid(MsgPasswordOthers)
}

// CheckPasswordTarget enforces invariant 3: only root changes root's
// password.
func CheckPasswordTarget(p Principal, target meta.User) error {
	if target.Root && !p.Root() {
		return forbid(MsgRootPassword)
	}
	return nil
}

// ValidUsername checks the username rule: 1 to 64 characters from
// A-Z a-z 0-9 . _ -, not "." or "..".
func ValidUsername(name string) error {
	switch {
	case name == "":
		return invalidArg("username required")
	case len(name) > meta.UsernameMaxChars:
		return invalidArg(fmt.Sprintf("username must be at most %d characters", meta.UsernameMaxChars))
	case name == "." || name == "..":
		return invalidArg(fmt.Sprintf("username must not be %q", name))
	case strings.IndexFunc(name, notNameRune) >= 0:
		return invalidArg("username may contain only A-Z a-z 0-9 . _ -")
	}
	return nil
}

func notNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
}

// ValidPassword checks a new password: field names the JSON field in the
// message ("password" or "new_password").
func ValidPassword(field, password string) error {
	switch {
	case password == "":
		return invalidArg(field + " required")
	case len(password) > PasswordMaxBytes:
		return invalidArg(fmt.Sprintf("%s must be at most %d bytes", field, PasswordMaxBytes))
	}
	return nil
}

func invalidArg(msg string) error { return domain.Refuse(domain.ErrInvalidArgument, msg) }

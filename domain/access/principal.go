package access

import (
	"strings"

	"github.com/narad/narad/domain/meta"
)

// Grant actions (api.md §4.3).
const (
	ActionProduce = "produce"
	ActionConsume = "consume"
	ActionCreate  = "create"
	ActionAdmin   = "admin"
)

// Principal is who a request acts for: an authenticated account, or, with
// security off, the client's address acting as root (api.md §4.6).
type Principal struct {
	// Name is the username; with security off, the client's address (it
	// names the caller in the metadata journal and keys per-identity caps,
	// but never matches an account in the self-service rules).
	Name   string
	root   bool
	admin  bool
	open   bool
	grants []meta.Grant
}

// FromUser is the principal of an authenticated account.
func FromUser(u meta.User) Principal {
	p := Principal{Name: u.Username, root: u.Root, admin: u.Root, grants: u.Grants}
	for _, g := range u.Grants {
		if g.Action == ActionAdmin {
			p.admin = true
		}
	}
	return p
}

// Open is the principal of a request to a node with security off: every
// check passes and user routes act as root; addr is the client's address.
func Open(addr string) Principal {
	return Principal{Name: addr, root: true, admin: true, open: true}
}

// Secured reports whether the principal is an authenticated account (false
// with security off).
func (p Principal) Secured() bool { return !p.open }

// Admin reports whether p holds admin (root, an admin grant, or security off).
func (p Principal) Admin() bool { return p.admin }

// Root reports whether p is the root account (or security off, which acts
// as root).
func (p Principal) Root() bool { return p.root }

// Owner is the owner a topic created by p records: the username, or empty
// with security off (api.md §4.5 invariant 5, §4.6).
func (p Principal) Owner() string {
	if p.open {
		return ""
	}
	return p.Name
}

// Holds reports whether p may perform action on topic through a grant
// (admins hold every action).
func (p Principal) Holds(action, topic string) bool {
	if p.admin {
		return true
	}
	for _, g := range p.grants {
		if g.Action == action && anyMatch(g.Patterns, topic) {
			return true
		}
	}
	return false
}

// HoldsAny reports whether any grant of p, whatever its action, covers topic.
func (p Principal) HoldsAny(topic string) bool {
	if p.admin {
		return true
	}
	for _, g := range p.grants {
		if anyMatch(g.Patterns, topic) {
			return true
		}
	}
	return false
}

// Owns reports whether p created topic (security off owns nothing: it is
// admin anyway).
func (p Principal) Owns(t Topic) bool { return !p.open && t.Owner != "" && t.Owner == p.Name }

func anyMatch(patterns []string, topic string) bool {
	for _, pat := range patterns {
		if Matches(pat, topic) {
			return true
		}
	}
	return false
}

// Matches reports whether a grant pattern covers topic: a pattern ending in
// '*' covers every name that starts with the text before it (that text
// included), any other pattern only the identical name.
func Matches(pattern, topic string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(topic, prefix)
	}
	return pattern == topic
}

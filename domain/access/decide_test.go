package access_test

import (
	"errors"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/access/accesstest"
	"github.com/narad/narad/domain/meta"
)

func principal(r accesstest.Role) access.Principal {
	if r.Letter == accesstest.Open {
		return access.Open("127.0.0.1")
	}
	u := meta.User{Username: r.Username, Root: r.Letter == accesstest.Root}
	for action, patterns := range r.Grants {
		u.Grants = append(u.Grants, meta.Grant{Action: action, Patterns: patterns})
	}
	return access.FromUser(u)
}

func topic(k accesstest.Kind) access.Topic { return access.Topic{Name: k.Name, Owner: k.Owner} }

// decide asks the domain rule the question the route asks, as the HTTP
// adapter and the use cases ask it.
func decide(p access.Principal, c accesstest.Case) error {
	t := topic(c.Kind)
	switch c.Route.Name {
	case "list topics", "metrics":
		return access.Decide(p, access.Request{Op: access.OpAuthenticated})
	case "create":
		return access.Decide(p, access.Request{Op: access.OpCreate, Topic: access.Topic{Name: c.Kind.Name}})
	case "create as child":
		if err := access.Decide(p, access.Request{Op: access.OpCreate, Topic: access.Topic{Name: accesstest.NewName}}); err != nil {
			return err
		}
		return access.Decide(p, access.Request{Op: access.OpModify, Topic: t})
	case "describe", "schema", "list children":
		return access.Decide(p, access.Request{Op: access.OpRead, Topic: t})
	case "alter":
		return access.Decide(p, access.Request{Op: access.OpModify, Topic: t})
	case "delete":
		return access.Decide(p, access.Request{Op: access.OpDelete, Topic: t})
	case "attach to mine", "attach to billing":
		return access.Decide(p, access.Request{Op: access.OpAttach, Parent: topic(parentOf(c.Route)), Child: t})
	case "detach from mine", "detach from billing":
		return access.Decide(p, access.Request{Op: access.OpDetach, Parent: topic(parentOf(c.Route)), Child: t})
	case "produce", "batch produce":
		return access.Decide(p, access.Request{Op: access.OpProduce, Topic: access.Topic{Name: c.Kind.Name}})
	case "consume", "ack":
		return access.Decide(p, access.Request{Op: access.OpConsume, Topic: access.Topic{Name: c.Kind.Name}})
	case "another's password":
		_, err := access.PasswordChange(p, "someone-else")
		return err
	case "remotes", "create remote":
		return access.Decide(p, access.Request{Op: access.OpRemote})
	}
	return access.Decide(p, access.Request{Op: access.OpAdmin})
}

func parentOf(r accesstest.Route) accesstest.Kind {
	if r.Slot == accesstest.ChildOfMine {
		return accesstest.Mine
	}
	return accesstest.NoMatch
}

// ensure that the domain rule gives every cell of the authorization matrix
// the verdict and the 403 message the spec gives it.
func TestDecideMatrix(t *testing.T) {
	cases := accesstest.Cases()
	if len(cases) < 450 {
		t.Fatalf("matrix has only %d cells", len(cases))
	}
	for _, c := range cases {
		err := decide(principal(c.Role), c)
		name := c.Route.Name + "/" + string(c.Role.Letter) + "/" + c.Kind.Name
		if c.Allowed() {
			if err != nil {
				t.Errorf("%s: refused (%v), the spec allows it", name, err)
			}
			continue
		}
		var r *domain.Refusal
		if !errors.As(err, &r) || !errors.Is(err, domain.ErrForbidden) || r.Detail != c.Route.Message(c.Role.Letter) {
			t.Errorf("%s: got %v, want 403 %q", name, err, c.Route.Message(c.Role.Letter))
		}
	}
}

// ensure that patterns match as §4.3 says: a trailing '*' is a prefix
// including the bare prefix, anything else is exact.
func TestMatches(t *testing.T) {
	cases := []struct {
		pattern, topic string
		want           bool
	}{
		{"orders-*", "orders-", true}, {"orders-*", "orders-eu", true}, {"orders-*", "orders", false},
		{"orders", "orders", true}, {"orders", "orders-eu", false}, {"*", "anything", true},
		{"Orders-*", "orders-eu", false},
	}
	for _, c := range cases {
		if got := access.Matches(c.pattern, c.topic); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.pattern, c.topic, got)
		}
	}
}

// ensure that an unknown operation is never allowed, even for root.
func TestDecideUnknownOpRefused(t *testing.T) {
	root := access.FromUser(meta.User{Username: "admin", Root: true, Grants: []meta.Grant{{Action: "admin"}}})
	if err := access.Decide(root, access.Request{Op: 200}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("unknown op: %v", err)
	}
}

// ensure that a remote child's stub is deleted or detached only by an admin
// or its parent's owner, and never with security off.
func TestDecideRemoteStubs(t *testing.T) {
	owner := access.FromUser(meta.User{Username: "k", Grants: []meta.Grant{{Action: "create", Patterns: []string{"*"}}}})
	parent := access.Topic{Name: "p", Owner: "k"}
	stub := access.Topic{Name: "s", RemoteStub: true}
	if err := access.Decide(owner, access.Request{Op: access.OpDelete, Topic: stub, Parent: parent}); err != nil {
		t.Fatalf("parent owner deleting stub: %v", err)
	}
	if err := access.Decide(owner, access.Request{Op: access.OpDetach, Parent: parent, Child: stub}); err != nil {
		t.Fatalf("parent owner detaching stub: %v", err)
	}
	other := access.Topic{Name: "p", Owner: "someone"}
	if err := access.Decide(owner, access.Request{Op: access.OpDelete, Topic: stub, Parent: other}); !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("non-owner deleting stub: %v", err)
	}
	open := access.Open("10.0.0.1")
	for _, op := range []access.Op{access.OpDelete, access.OpDetach} {
		err := access.Decide(open, access.Request{Op: op, Topic: stub, Parent: parent, Child: stub})
		var r *domain.Refusal
		if !errors.As(err, &r) || r.Detail != access.MsgRemotesInsecure {
			t.Fatalf("security off, op %d on a stub: %v", op, err)
		}
	}
}

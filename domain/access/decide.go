package access

import "github.com/narad/narad/domain"

// Op is one kind of request, as the route table's "who may call" column
// groups them (api.md §1, §4.4).
type Op uint8

// Operations.
const (
	// OpAuthenticated: any authenticated caller (list topics, /metrics on
	// the API port).
	OpAuthenticated Op = iota + 1
	// OpProduce: produce and batch produce; a produce grant on Topic.Name,
	// decided before the topic is looked up.
	OpProduce
	// OpConsume: consume (every mode) and the ack family; a consume grant
	// on Topic.Name.
	OpConsume
	// OpCreate: create Topic.Name; a create grant on the name. A create as
	// child also asks OpModify of the parent.
	OpCreate
	// OpRead: describe, schema history, list children of Topic; any grant
	// on the name, ownership, or admin.
	OpRead
	// OpModify: alter Topic, or name it as a new child's parent; owner or
	// admin.
	OpModify
	// OpDelete: delete Topic; owner or admin. A remote child's stub has no
	// owner: the owner of Parent, or admin, with security on.
	OpDelete
	// OpAttach: attach Child to Parent; owner of both, or admin.
	OpAttach
	// OpDetach: detach Child from Parent; owner of either, or admin. A
	// remote child (Child.RemoteStub): owner of Parent, or admin, with
	// security on.
	OpDetach
	// OpAdmin: user management, every /v1/cluster route; admin.
	OpAdmin
	// OpRemote: every remotes route, remote-child writes; admin with
	// security on.
	OpRemote
)

// Topic is what a decision needs of a topic record.
type Topic struct {
	Name  string
	Owner string
	// RemoteStub marks a remote child's stub (it has no owner of its own).
	RemoteStub bool
}

// Request is one decision's question. Which topic fields matter depends on
// Op (see each Op).
type Request struct {
	Op     Op
	Topic  Topic
	Parent Topic
	Child  Topic
}

// The 403 messages of the route table (api.md §2, appendix B matches some by
// substring).
const (
	MsgProduceNotAllowed = "produce not allowed on this topic"
	MsgConsumeNotAllowed = "consume not allowed on this topic"
	MsgCreateNotAllowed  = "create not allowed on this topic"
	MsgNoGrant           = "no grant on this topic"
	MsgOwnerOrAdmin      = "only the topic owner or an admin may modify this topic"
	MsgAdminRequired     = "admin privileges required"
	MsgRemotesInsecure   = "remotes require security"
)

// Decide answers whether p may make request r: nil, or a *domain.Refusal of
// domain.ErrForbidden carrying the route's message.
func Decide(p Principal, r Request) error {
	if ok, msg := allowed(p, r); !ok {
		return forbid(msg)
	}
	return nil
}

func allowed(p Principal, r Request) (bool, string) {
	switch r.Op {
	case OpAuthenticated:
		return true, ""
	case OpProduce:
		return p.Holds(ActionProduce, r.Topic.Name), MsgProduceNotAllowed
	case OpConsume:
		return p.Holds(ActionConsume, r.Topic.Name), MsgConsumeNotAllowed
	case OpCreate:
		return p.Holds(ActionCreate, r.Topic.Name), MsgCreateNotAllowed
	case OpRead:
		return CanRead(p, r.Topic), MsgNoGrant
	case OpModify:
		return p.Admin() || p.Owns(r.Topic), MsgOwnerOrAdmin
	case OpDelete:
		return deletable(p, r)
	case OpAttach:
		return p.Admin() || p.Owns(r.Parent) && p.Owns(r.Child), MsgOwnerOrAdmin
	case OpDetach:
		return detachable(p, r)
	case OpAdmin:
		return p.Admin(), MsgAdminRequired
	case OpRemote:
		return remote(p)
	}
	return false, MsgAdminRequired // an unknown operation is never allowed
}

// CanRead reports whether p may read t: any grant on the name, ownership,
// or admin. Topic lists keep exactly the topics it allows.
func CanRead(p Principal, t Topic) bool { return p.HoldsAny(t.Name) || p.Owns(t) }

func deletable(p Principal, r Request) (bool, string) {
	if !r.Topic.RemoteStub {
		return p.Admin() || p.Owns(r.Topic), MsgOwnerOrAdmin
	}
	if !p.Secured() {
		return false, MsgRemotesInsecure
	}
	return p.Admin() || p.Owns(r.Parent), MsgOwnerOrAdmin
}

func detachable(p Principal, r Request) (bool, string) {
	if !r.Child.RemoteStub {
		return p.Admin() || p.Owns(r.Parent) || p.Owns(r.Child), MsgOwnerOrAdmin
	}
	if !p.Secured() {
		return false, MsgRemotesInsecure
	}
	return p.Admin() || p.Owns(r.Parent), MsgOwnerOrAdmin
}

func remote(p Principal) (bool, string) {
	if !p.Secured() {
		return false, MsgRemotesInsecure
	}
	return p.Admin(), MsgAdminRequired
}

func forbid(msg string) error { return domain.Refuse(domain.ErrForbidden, msg) }

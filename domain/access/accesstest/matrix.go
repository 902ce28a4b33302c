// Package accesstest is the authorization matrix of api.md §1 and §4.4 as
// data: every role and grant pattern, every route, topics a role's patterns
// match and do not match, owned and not owned, and what the spec says each
// combination answers. The domain test checks access.Decide against it, and
// the HTTP tests replay the same table over a real node, so the rule and
// its wiring are held to one expectation written from the spec, not from
// the code.
package accesstest

import "strings"

// Roles: one letter each, so an expectation reads as a set ("RAO").
const (
	Root     = 'R' // the root account "admin"
	Admin    = 'A' // a non-root admin (grant admin)
	Producer = 'P' // produce:orders-*
	Consumer = 'C' // consume:orders-*
	Creator  = 'K' // create:orders-*; owns orders-mine and team-x
	NoGrant  = 'N' // an account without grants
	Open     = 'O' // security off: the client address, acting as root
)

// AllRoles lists every role.
const AllRoles = "RAPCKNO"

// Role is one caller of the matrix.
type Role struct {
	Letter   byte
	Username string // "" for Open
	// Grants as action -> patterns; admin has no patterns.
	Grants map[string][]string
}

// Roles returns every role with its account.
func Roles() []Role {
	return []Role{
		{Root, "admin", map[string][]string{"admin": nil}},
		{Admin, "ops", map[string][]string{"admin": nil}},
		{Producer, "producer", map[string][]string{"produce": {"orders-*"}}},
		{Consumer, "consumer", map[string][]string{"consume": {"orders-*"}}},
		{Creator, "creator", map[string][]string{"create": {"orders-*"}}},
		{NoGrant, "nobody", nil},
		{Open, "", nil},
	}
}

// Kind is one kind of topic a route is asked about.
type Kind struct {
	Name  string // the topic's name (a replay may add a suffix that keeps the patterns' verdicts)
	Owner string // the username that created it
}

// Kinds: matched by the orders-* patterns or not, owned by the root admin
// or by the creator role.
var (
	Match   = Kind{"orders-eu", "admin"}
	NoMatch = Kind{"billing", "admin"}
	Mine    = Kind{"orders-mine", "creator"}
	Team    = Kind{"team-x", "creator"} // owned by creator, outside its grants
)

// Kinds lists every topic kind.
func Kinds() []Kind { return []Kind{Match, NoMatch, Mine, Team} }

// Fixed topics some routes name besides the case's topic.
var (
	// NewName is the name a create-as-child creates (creator may create it).
	NewName = "orders-new"
)

// Slot says what the case's topic is to the route.
type Slot uint8

// Slots.
const (
	NoTopic     Slot = iota // the route names no topic
	TopicSlot               // the route's {topic}
	CreateSlot              // the name a create asks for
	ParentSlot              // the parent of a create-as-child (NewName is created)
	ChildOfMine             // the child of an attach/detach whose parent is Mine
	ChildOfNo               // the child of an attach/detach whose parent is NoMatch
)

// Route is one row of the route table with the spec's rule for it.
type Route struct {
	Name   string
	Method string
	// Path has {t} for the case's topic, {p} for a fixed parent, {u} for
	// another account's username.
	Path string
	Body string
	Slot Slot
	// Allow maps a topic kind's name to the roles allowed ("" key for
	// routes without a topic).
	Allow map[string]string
	// Msg is the 403 message; MsgFor overrides it for some roles.
	Msg    string
	MsgFor map[byte]string
	// Except names a topic kind the route is not asked about, because a
	// rule checked before access answers it (an attach of a topic to
	// itself is a 400 for everyone, api.md §2.10.1).
	Except string
}

// Allowed reports whether role may call r about kind.
func (r Route) Allowed(role byte, kind string) bool {
	return strings.IndexByte(r.Allow[kind], role) >= 0
}

// Message is the 403 message role gets from r.
func (r Route) Message(role byte) string {
	if m, ok := r.MsgFor[role]; ok {
		return m
	}
	return r.Msg
}

// Case is one cell of the matrix.
type Case struct {
	Route Route
	Role  Role
	Kind  Kind // zero for routes without a topic
}

// Allowed reports the spec's verdict for the cell.
func (c Case) Allowed() bool { return c.Route.Allowed(c.Role.Letter, c.Kind.Name) }

// Cases returns every cell: every route × every role × every topic kind the
// route takes.
func Cases() []Case {
	var out []Case
	for _, r := range Routes() {
		kinds := Kinds()
		if r.Slot == NoTopic {
			kinds = []Kind{{}}
		}
		for _, k := range kinds {
			if k.Name == r.Except && k.Name != "" {
				continue
			}
			for _, role := range Roles() {
				out = append(out, Case{Route: r, Role: role, Kind: k})
			}
		}
	}
	return out
}

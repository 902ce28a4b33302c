package remotes

import (
	"context"
	"slices"

	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// View is a remote as an answer carries it: the record without its sealed
// password, the links using it and, when asked, each member's credential
// state.
type View struct {
	Remote meta.Remote // SealedPassword is always nil
	Links  []string    // parent/child; nil in a write's answer
	Nodes  []NodeState // nil unless asked
}

// NodeState is one member's credential cache state for a remote
// (internals.md §7.6).
type NodeState struct {
	Node              string
	State             string // ready, stale, credential_unreadable, node_insecure, missing, unknown
	CredentialVersion int64
	KeyVersion        string
	Fingerprint       string
	LastOKAtMs        int64
	LastError         string // a class, or "none"
}

// Listing is GET /v1/remotes.
type Listing struct {
	AllowlistSet bool
	// KeyVersion is the current key's version; "" before the first remote.
	KeyVersion string
	// KeyFirstSealedAtMs is when the oldest password sealed under the
	// current key was set; AtMs is when the listing was read.
	KeyFirstSealedAtMs int64
	AtMs               int64
	Remotes            []View
	// Lingering names the deleted remotes some member still holds, by
	// name (with nodes asked for the other members too, else this node's
	// own cache alone).
	Lingering []Lingering
	// NotAnswering names the members that did not report their credential
	// states (with nodes asked for).
	NotAnswering []string
}

// List returns every remote; nodes adds the members' credential states.
func (s *Service) List(ctx context.Context, p access.Principal, nodes bool) (Listing, error) {
	ctx = s.begin(ctx, ports.AuditRemoteList)
	out, err := s.list(ctx, p, nodes)
	s.record(ctx, p, "", err)
	return out, err
}

func (s *Service) list(ctx context.Context, p access.Principal, nodes bool) (Listing, error) {
	if err := authorize(p); err != nil {
		return Listing{}, err
	}
	all, err := s.d.Store.Remotes()
	if err != nil {
		return Listing{}, readFailure(err)
	}
	out := Listing{AllowlistSet: s.d.Transport.AllowlistSet(), Remotes: make([]View, 0, len(all))}
	if salt, found, err := s.d.Store.RemoteSalt(); err == nil && found {
		out.KeyVersion, _ = s.d.Keyring.KeyVersion(salt)
	}
	out.AtMs = s.d.Clock.Now().UnixMilli()
	for _, r := range all {
		if r.KeyVersion == out.KeyVersion && (out.KeyFirstSealedAtMs == 0 || r.SetAtMs < out.KeyFirstSealedAtMs) {
			out.KeyFirstSealedAtMs = r.SetAtMs
		}
		v, err := s.view(ctx, r, nodes)
		if err != nil {
			return Listing{}, err
		}
		out.Remotes = append(out.Remotes, v)
	}
	out.NotAnswering = notAnswering(out.Remotes)
	var silent []string
	out.Lingering, silent = s.lingering(ctx, all, nodes)
	for _, n := range silent {
		if !slices.Contains(out.NotAnswering, n) {
			out.NotAnswering = append(out.NotAnswering, n)
		}
	}
	return out, nil
}

// Get returns one remote.
func (s *Service) Get(ctx context.Context, p access.Principal, name string, nodes bool) (View, error) {
	ctx = s.begin(ctx, ports.AuditRemoteGet)
	v, err := s.get(ctx, p, name, nodes)
	s.record(ctx, p, name, err)
	return v, err
}

func (s *Service) get(ctx context.Context, p access.Principal, name string, nodes bool) (View, error) {
	if err := authorize(p); err != nil {
		return View{}, err
	}
	r, err := s.readRemote(name)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, r, nodes)
}

// view builds r's answer.
func (s *Service) view(ctx context.Context, r meta.Remote, nodes bool) (View, error) {
	links, err := s.links(r)
	if err != nil {
		return View{}, err
	}
	v := View{Links: links}
	if links == nil {
		v.Links = []string{}
	}
	if nodes {
		v.Nodes = s.nodeStates(ctx, r)
	}
	r.SealedPassword = nil
	v.Remote = r
	return v, nil
}

// writtenView is the answer of a write: the remote as this node's replica
// now holds it, without links or nodes.
func (s *Service) writtenView(name string) (View, error) {
	r, err := s.readRemote(name)
	if err != nil {
		return View{}, err
	}
	r.SealedPassword = nil
	return View{Remote: r}, nil
}

// links names the remote children using r (this incarnation), as
// parent/child.
func (s *Service) links(r meta.Remote) ([]string, error) {
	all, err := s.d.Store.Links()
	if err != nil {
		return nil, readFailure(err)
	}
	var out []string
	for _, l := range all {
		if l.Remote != nil && l.Remote.Name == r.Name && l.Remote.RemoteID == r.ID {
			out = append(out, l.Parent+"/"+l.Child)
		}
	}
	return out, nil
}

// nodeStates reports every member's credential state: this node's from
// its cache, the others' over op 36 (unknown when a member does not
// answer).
func (s *Service) nodeStates(ctx context.Context, r meta.Remote) []NodeState {
	members, err := s.d.Store.Members()
	if err != nil {
		return []NodeState{s.cache.State(r, s.o.Self)}
	}
	others := s.nodeCredentials(ctx, members, r)
	out := make([]NodeState, 0, len(members))
	seenSelf := false
	for _, m := range members {
		if m.ID == s.o.Self {
			out = append(out, s.cache.State(r, s.o.Self))
			seenSelf = true
			continue
		}
		st, ok := others[m.ID]
		if !ok {
			st = NodeState{Node: m.ID, State: StateUnknown, LastError: "none"}
		} else if st.CredentialVersion < r.CredentialVersion && st.State == StateReady {
			st.State = StateStale
		}
		out = append(out, st)
	}
	if !seenSelf {
		out = append(out, s.cache.State(r, s.o.Self))
	}
	return out
}

// notAnswering names the members whose credential state is unknown in
// any remote's nodes, once each, in order met.
func notAnswering(views []View) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range views {
		for _, n := range v.Nodes {
			if n.State == StateUnknown && !seen[n.Node] {
				seen[n.Node] = true
				out = append(out, n.Node)
			}
		}
	}
	return out
}

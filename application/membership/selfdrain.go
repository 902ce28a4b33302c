package membership

import (
	"sync"
	"sync/atomic"

	"github.com/narad/narad/domain/meta"
)

// DrainStore is what SelfDrain reads: the member table and the replica's
// view counters.
type DrainStore interface {
	Members() ([]meta.Member, error)
	Versions() meta.Versions
}

// SelfDrain answers whether this node is marked draining (api.md §2.17:
// a draining node refuses client produces). It re-reads the member table
// only when the placement view moved (drain flags move it, heartbeats do
// not), so the check on every produce is two atomic loads and a
// comparison. Safe for concurrent use.
type SelfDrain struct {
	store DrainStore
	self  string

	last    atomic.Pointer[drainSeen] // nil before the first read
	refresh sync.Mutex                // one member-table read at a time
}

// drainSeen is the drain flag as of one placement view version.
type drainSeen struct {
	version  uint64
	draining bool
}

// NewSelfDrain watches the member record of node self.
func NewSelfDrain(store DrainStore, self string) *SelfDrain {
	if store == nil || self == "" {
		panic("membership: self drain needs a store and a node id")
	}
	return &SelfDrain{store: store, self: self}
}

// Draining reports whether this node's member record is marked draining.
// A failed read keeps the last answer (false before any), so a lagging
// replica never refuses produces it accepted a moment ago.
func (s *SelfDrain) Draining() bool {
	v := s.store.Versions().Of(meta.ViewPlacement)
	if seen := s.last.Load(); seen != nil && seen.version == v {
		return seen.draining
	}
	s.refresh.Lock()
	defer s.refresh.Unlock()
	prev := s.last.Load()
	if prev != nil && prev.version == v {
		return prev.draining // another caller read it meanwhile
	}
	members, err := s.store.Members()
	if err != nil {
		return prev != nil && prev.draining
	}
	seen := &drainSeen{version: v}
	if m, ok := findMember(members, s.self); ok {
		seen.draining = m.Draining
	}
	s.last.Store(seen)
	return seen.draining
}

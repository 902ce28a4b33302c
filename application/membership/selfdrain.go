package membership

import (
	"sync"

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
// not), so the check on every produce is a counter comparison. Safe for
// concurrent use.
type SelfDrain struct {
	store DrainStore
	self  string

	mu       sync.Mutex
	seen     uint64
	read     bool
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read && v == s.seen {
		return s.draining
	}
	members, err := s.store.Members()
	if err != nil {
		return s.draining
	}
	s.draining = false
	for _, m := range members {
		if m.ID == s.self {
			s.draining = m.Draining
		}
	}
	s.seen, s.read = v, true
	return s.draining
}

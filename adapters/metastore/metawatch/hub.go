package metawatch

import (
	"sync"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Hub is a set of subscriptions. The zero value is ready. Safe for
// concurrent use.
type Hub struct {
	mu     sync.Mutex
	subs   map[*sub]struct{}
	closed error
}

type sub struct {
	hub *Hub
	ch  chan ports.MetaChange
	err error // guarded by hub.mu; set when ch closes
	end bool  // guarded by hub.mu
}

var _ ports.MetaSubscription = (*sub)(nil)

// Subscribe adds a subscription buffering up to buffer changes (minimum 1).
// After Close it returns the error Close was given.
func (h *Hub) Subscribe(buffer int) (ports.MetaSubscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != nil {
		return nil, h.closed
	}
	if h.subs == nil {
		h.subs = make(map[*sub]struct{})
	}
	s := &sub{hub: h, ch: make(chan ports.MetaChange, max(buffer, 1))}
	h.subs[s] = struct{}{}
	return s, nil
}

// Publish offers c to every subscription without blocking; one whose buffer
// is full is ended with meta.ErrWatchLagged.
func (h *Hub) Publish(c ports.MetaChange) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- c:
		default:
			h.endLocked(s, meta.ErrWatchLagged)
		}
	}
}

// Close ends every subscription with err (meta.ErrStopped when nil) and
// refuses new ones.
func (h *Hub) Close(err error) {
	if err == nil {
		err = meta.ErrStopped
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed == nil {
		h.closed = err
	}
	for s := range h.subs {
		h.endLocked(s, err)
	}
}

// Len is the number of live subscriptions.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *Hub) endLocked(s *sub, err error) {
	if s.end {
		return
	}
	s.end, s.err = true, err
	delete(h.subs, s)
	close(s.ch)
}

func (s *sub) C() <-chan ports.MetaChange { return s.ch }

func (s *sub) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

func (s *sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.endLocked(s, nil)
}

package authn

import (
	"context"
	"slices"
	"sync"
)

// slots bounds the verifications running at once. A freed slot goes to
// the oldest waiting clean check (a username with a full bucket), else to
// the oldest other one. Safe for concurrent use.
type slots struct {
	mu           sync.Mutex
	free         int
	clean, dirty []*slotWaiter // FIFO
}

type slotWaiter struct {
	ready   chan struct{}
	granted bool // guarded by slots.mu
}

func newSlots(n int) *slots { return &slots{free: n} }

// acquire takes a slot, waiting in clean's queue until one is handed over
// or ctx ends (its error; no slot is then held).
func (s *slots) acquire(ctx context.Context, clean bool) error {
	s.mu.Lock()
	if s.free > 0 && len(s.clean) == 0 && len(s.dirty) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{ready: make(chan struct{})}
	if clean {
		s.clean = append(s.clean, w)
	} else {
		s.dirty = append(s.dirty, w)
	}
	s.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	granted := w.granted
	if !granted {
		s.clean = slices.DeleteFunc(s.clean, func(x *slotWaiter) bool { return x == w })
		s.dirty = slices.DeleteFunc(s.dirty, func(x *slotWaiter) bool { return x == w })
	}
	s.mu.Unlock()
	if granted {
		s.release() // handed over as ctx ended: pass it on
	}
	return ctx.Err()
}

// release frees a slot, handing it to the next waiter if there is one.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w *slotWaiter
	switch {
	case len(s.clean) > 0:
		w, s.clean = s.clean[0], s.clean[1:]
	case len(s.dirty) > 0:
		w, s.dirty = s.dirty[0], s.dirty[1:]
	default:
		s.free++
		return
	}
	w.granted = true
	close(w.ready)
}

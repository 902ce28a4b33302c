package segmentlog

import (
	"slices"
	"sync"
	"sync/atomic"
)

// watchers holds the functions OnChange registered. The commit path reads
// them with one atomic load; registering copies the list.
type watchers struct {
	mu   sync.Mutex // serialises registrations
	list atomic.Pointer[[]*watcher]
}

type watcher struct{ fn func(topic string) }

// add registers fn and returns the function that unregisters it.
func (ws *watchers) add(fn func(topic string)) (stop func()) {
	w := &watcher{fn: fn}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	next := append(ws.snapshot(), w)
	ws.list.Store(&next)
	return func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		next := slices.DeleteFunc(ws.snapshot(), func(x *watcher) bool { return x == w })
		ws.list.Store(&next)
	}
}

// snapshot copies the current list (callers hold mu).
func (ws *watchers) snapshot() []*watcher {
	if p := ws.list.Load(); p != nil {
		return append([]*watcher(nil), *p...)
	}
	return nil
}

// notify calls every registered function with topic.
func (ws *watchers) notify(topic string) {
	if p := ws.list.Load(); p != nil {
		for _, w := range *p {
			w.fn(topic)
		}
	}
}

// OnChange registers fn, called with the topic's name after each change of
// one of its partitions that would close a Changed channel: a high-watermark
// advance, a log closing, installed or removed. fn runs on the goroutine
// that made the change, possibly under the partition's locks: it must be
// quick, must not block and must not call back into the Store. The returned
// function unregisters fn.
func (s *Store) OnChange(fn func(topic string)) (stop func()) {
	return s.watchers.add(fn)
}

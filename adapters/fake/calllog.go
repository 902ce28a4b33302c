package fake

import (
	"context"
	"sync"
)

// callLog is what the remote-peer fakes share: every call recorded in
// arrival order, the calls in flight and the most at once, a gate (Block)
// that holds later calls until released, and per-node failures (Fail).
// Safe for concurrent use.
type callLog[C any] struct {
	mu       sync.Mutex
	fail     map[string]error
	gate     chan struct{} // nil: calls answer at once
	calls    []C
	inFlight int
	most     int
}

// Block holds every later call until release is called (or the call's
// context ends: it then fails with ctx.Err()).
func (l *callLog[C]) Block() (release func()) {
	gate := make(chan struct{})
	l.mu.Lock()
	l.gate = gate
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			if l.gate == gate {
				l.gate = nil
			}
			l.mu.Unlock()
			close(gate)
		})
	}
}

// Fail makes every later call to node fail with err (ErrFakePeerFailure
// when nil, a transport failure).
func (l *callLog[C]) Fail(node string, err error) {
	if err == nil {
		err = ErrFakePeerFailure
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail == nil {
		l.fail = map[string]error{}
	}
	l.fail[node] = err
}

// enter records call to node and waits at the gate, if one is set; it
// returns ctx.Err() when the context ends first, else the error Fail set
// for node (nil when none). Every enter is paired with leave.
func (l *callLog[C]) enter(ctx context.Context, node string, call C) error {
	l.mu.Lock()
	l.calls = append(l.calls, call)
	l.inFlight++
	l.most = max(l.most, l.inFlight)
	gate := l.gate
	l.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fail[node]
}

func (l *callLog[C]) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
}

// Calls returns the calls seen, in arrival order.
func (l *callLog[C]) Calls() []C {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]C(nil), l.calls...)
}

// InFlight returns the calls running now.
func (l *callLog[C]) InFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight
}

// MostInFlight returns the most calls that ever ran at once.
func (l *callLog[C]) MostInFlight() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most
}

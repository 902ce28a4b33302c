package fake

import (
	"slices"
	"sync"

	"github.com/narad/narad/ports"
)

var _ ports.AuditLog = (*Audit)(nil)

// Audit is a ports.AuditLog that keeps every event for a test to read.
type Audit struct {
	mu     sync.Mutex
	events []ports.AuditEvent
}

// Record keeps e.
func (a *Audit) Record(e ports.AuditEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, e)
}

// Events returns every event recorded so far, oldest first.
func (a *Audit) Events() []ports.AuditEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.events)
}

// Count returns how many events named event were recorded.
func (a *Audit) Count(event string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, e := range a.events {
		if e.Event == event {
			n++
		}
	}
	return n
}

package consume

import (
	"time"

	"github.com/narad/narad/domain"
)

// The pump's side of routed consumers (internals.md §5.5): a consumer
// parked on a topic whose records live on other owners is woken by a
// token's notification or push, and the token's answer asks for the token
// again for as long as such consumers wait.

// handClaim wakes the oldest routed consumer parked on topic to claim
// owner's notified record; false when none is parked (a pass).
func (p *pump) handClaim(topic, owner string) bool {
	return p.handRouted(topic, answer{claim: owner})
}

// handPushed gives ds, reserved for this node on owner, to the oldest
// routed consumer parked on topic; false when none is parked (a pass).
func (p *pump) handPushed(topic, owner string, ds []domain.Delivery) bool {
	return p.handRouted(topic, answer{ds: ds, from: owner})
}

// handRouted answers the oldest routed consumer parked on topic with a;
// false when none is parked.
func (p *pump) handRouted(topic string, a answer) bool {
	p.mu.Lock()
	var w *waiter
	if q, ok := p.queues[topic]; ok {
		for _, x := range q.shared {
			if x.routed && p.takeLocked(x) {
				w = x
				break
			}
		}
	}
	p.mu.Unlock()
	if w == nil {
		return false
	}
	w.reply <- a
	return true
}

// routedUntil is, per topic with routed consumers parked, when the longest
// of their waits ends.
func (p *pump) routedUntil() map[string]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]time.Time{}
	for name, q := range p.queues {
		if until, ok := q.routedUntil(); ok {
			out[name] = until
		}
	}
	return out
}

// routedUntilOf is routedUntil for topic alone; ok is false when no routed
// consumer is parked on it.
func (p *pump) routedUntilOf(topic string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if q, found := p.queues[topic]; found {
		return q.routedUntil()
	}
	return time.Time{}, false
}

// routedUntil is when the longest wait of q's parked routed consumers
// ends; ok is false when none is parked. Callers hold the pump's lock.
func (q *waitQueue) routedUntil() (until time.Time, ok bool) {
	for _, w := range q.shared {
		if w.routed && w.state.Load() == waiterParked && w.until.After(until) {
			until, ok = w.until, true
		}
	}
	return until, ok
}

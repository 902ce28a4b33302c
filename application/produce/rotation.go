package produce

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// rotations hold the keyless round-robin of each topic on this node: each
// starts at a random turn, so nodes do not all begin on partition 0.
// Rotations unused for rotationIdleTimeout are forgotten. Safe for
// concurrent use.
type rotations struct {
	mu        sync.RWMutex
	byTopic   map[string]*rotation
	lastPrune atomic.Int64 // unix nanoseconds of the last sweep
}

type rotation struct {
	next     atomic.Uint64
	lastUsed atomic.Int64 // unix nanoseconds
}

func newRotations() *rotations { return &rotations{byTopic: map[string]*rotation{}} }

// take reserves n consecutive turns of topic's rotation and returns the
// first; partition = turn mod the partition count.
func (r *rotations) take(topic string, n int, now time.Time) uint64 {
	r.pruneIfDue(now)
	r.mu.RLock()
	rot, ok := r.byTopic[topic]
	r.mu.RUnlock()
	if !ok {
		rot = r.create(topic)
	}
	rot.lastUsed.Store(now.UnixNano())
	return rot.next.Add(uint64(n)) - uint64(n)
}

func (r *rotations) create(topic string) *rotation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rot, ok := r.byTopic[topic]; ok {
		return rot
	}
	rot := &rotation{}
	rot.next.Store(rand.Uint64())
	r.byTopic[topic] = rot
	return rot
}

// pruneIfDue forgets idle rotations, at most once per rotationPruneInterval.
func (r *rotations) pruneIfDue(now time.Time) {
	last := r.lastPrune.Load()
	if now.UnixNano()-last < int64(rotationPruneInterval) || !r.lastPrune.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	cutoff := now.Add(-rotationIdleTimeout).UnixNano()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, rot := range r.byTopic {
		if rot.lastUsed.Load() < cutoff {
			delete(r.byTopic, name)
		}
	}
}

package remotes

import (
	"math"
	"sync"
	"time"
)

// window admits at most max events in any span of width: a sliding window
// of the admitted events' times.
type window struct {
	mu    sync.Mutex
	max   int
	width time.Duration
	times []time.Time // admitted, oldest first, within the last width
}

func newWindow(max int, width time.Duration) *window { return &window{max: max, width: width} }

// admit records an event at now, or refuses it and says in whole seconds
// (at least 1) when the oldest admitted one leaves the window.
func (w *window) admit(now time.Time) (ok bool, retryAfterSeconds int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cut := 0
	for cut < len(w.times) && now.Sub(w.times[cut]) >= w.width {
		cut++
	}
	w.times = w.times[cut:]
	if len(w.times) >= w.max {
		wait := w.width - now.Sub(w.times[0])
		return false, max(1, int(math.Ceil(wait.Seconds())))
	}
	w.times = append(w.times, now)
	return true, 0
}

// spacing admits one event per key per gap.
type spacing struct {
	mu   sync.Mutex
	gap  time.Duration
	last map[string]time.Time
}

func newSpacing(gap time.Duration) *spacing { return &spacing{gap: gap, last: map[string]time.Time{}} }

// admit records key at now unless its last admission is under gap ago.
func (s *spacing) admit(key string, now time.Time) (ok bool, retryAfterSeconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if last, seen := s.last[key]; seen && now.Sub(last) < s.gap {
		return false, max(1, int(math.Ceil((s.gap - now.Sub(last)).Seconds())))
	}
	s.last[key] = now
	return true, 0
}

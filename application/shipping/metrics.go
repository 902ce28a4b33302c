package shipping

import (
	"encoding/json"
	"sync/atomic"
)

// Metrics counts what the send path did (api.md §7, the narad_remote_* and
// narad_fanout_remote_* counters). Calls never block and never fail.
// Gauges (link states, held bytes) are read from the Shipper at scrape.
type Metrics interface {
	// Request counts one request to remote with its answer: the status, or
	// "error" for a transport failure.
	Request(remote, code string)
	// Failed counts a failed request by class (a link state).
	Failed(remote, class string)
	// Resent counts records whose request may have landed and went again.
	Resent(remote string, records int)
	// Skipped counts records an admin let the link drop.
	Skipped(parent, child string, records int)
	// CheckFailed counts a target check that errored.
	CheckFailed(parent, child string)
	// Reread counts a slab read again because the held budget was full.
	Reread()
	// Bytes counts a request body before and after compression.
	Bytes(remote string, body, wire int)
	// RequestSeconds observes one request's round trip, and
	// SlotWaitSeconds the wait for one of the remote's request slots.
	RequestSeconds(remote string, seconds float64)
	SlotWaitSeconds(remote string, seconds float64)
}

// NopMetrics counts nothing.
type NopMetrics struct{}

func (NopMetrics) Request(string, string)          {}
func (NopMetrics) Failed(string, string)           {}
func (NopMetrics) Resent(string, int)              {}
func (NopMetrics) Skipped(string, string, int)     {}
func (NopMetrics) CheckFailed(string, string)      {}
func (NopMetrics) Reread()                         {}
func (NopMetrics) Bytes(string, int, int)          {}
func (NopMetrics) RequestSeconds(string, float64)  {}
func (NopMetrics) SlotWaitSeconds(string, float64) {}

// budget is the node's held-records budget (remotes.max_held_bytes),
// first come first served.
type budget struct {
	max  int64
	used atomic.Int64
}

func newBudget(max int64) *budget { return &budget{max: max} }

// take reserves n bytes; false when they do not fit.
func (b *budget) take(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

func (b *budget) give(n int64) { b.used.Add(-n) }

// HeldBytes is what the node holds now (narad_remote_held_bytes).
func (s *Shipper) HeldBytes() int64 { return s.held.used.Load() }

// topicID reads a topic object's id ("" when it has none).
func topicID(body []byte) string {
	var t struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &t)
	return t.ID
}

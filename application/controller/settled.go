package controller

import (
	"time"

	"github.com/narad/narad/domain/meta"
)

// The sweep, the prune and the rebalance decode every topic and every
// assignment row. On an idle cluster nothing they read changes between
// passes, so each remembers the view versions it read when it last
// finished clean and skips itself while they stand still (the same rule as
// the fan-out reconciler's, internals §6.1): heartbeats move no view, a
// topic, an assignment, a member's routing fields, status or drain flag,
// or a tombstone do.

// settledViews are the views the sweep, the prune and the rebalance read
// (the rebalance's plan is a function of members, topics and assignments).
var settledViews = meta.Views(0).With(meta.ViewTopics).With(meta.ViewAssignments).With(meta.ViewPlacement)

// settled is what a clean pass read; the zero value holds nothing.
type settled struct {
	valid    bool
	versions meta.Versions
	at       time.Time
}

// holds reports whether the pass s describes still stands at now.
func (s settled) holds(now time.Time, v meta.Versions) bool {
	return s.valid && !v.Moved(s.versions, settledViews) && now.Sub(s.at) < settledMaxInterval
}

// settle records the versions before a pass reads anything: an entry that
// applies during the pass moves them past the record.
func (c *Controller) settle(now time.Time) settled {
	return settled{valid: true, versions: c.store.Versions(), at: now}
}

package fanout

import (
	"time"

	"github.com/narad/narad/domain/meta"
)

// The reconciler's comparison decodes every topic record, so on an idle
// cluster it would spend CPU in proportion to the number of topics every
// second. It skips the comparison while nothing it reads has moved
// (internals §6.1): the views below, heartbeats and drain flags excluded.

// reconcileViews are the views whose versions gate a full pass.
var reconcileViews = meta.Views(0).With(meta.ViewTopics).With(meta.ViewAssignments).
	With(meta.ViewSchemas).With(meta.ViewUsers).With(meta.ViewRouting)

// passMemo remembers what the last full pass (or orphan sweep) read.
type passMemo struct {
	valid    bool
	versions meta.Versions
	exits    uint64 // cursor exits seen when it ran
	at       time.Time
}

// current reports whether a pass that read memo still describes the
// replica: same views, no cursor exited since, and younger than maxAge.
func (m passMemo) current(now time.Time, v meta.Versions, exits uint64, maxAge time.Duration) bool {
	return m.valid && !v.Moved(m.versions, reconcileViews) && exits == m.exits && now.Sub(m.at) < maxAge
}

// snapshot is what a pass about to read the views records, taken before it
// reads: a change applied during the pass moves the versions past it, so
// the next tick runs again rather than trusting a half-seen change.
func (e *Engine) snapshot() passMemo {
	return passMemo{valid: true, versions: e.d.Store.Versions(), exits: e.exits.Load(), at: e.d.Clock.Now()}
}

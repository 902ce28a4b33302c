package membership

import (
	"context"
	"fmt"

	"github.com/narad/narad/ports"
)

// quarantineListMax is how many quarantined copies a status names
// (internals.md §10.3: the first 100).
const quarantineListMax = 100

// StatusDeps are what a node's status report reads.
type StatusDeps struct {
	Self  string
	Drain interface{ Draining() bool }
	// Backlog is the ingress WAL's dispatch backlog.
	Backlog func() uint64
	// InFlight is the produces being accepted now.
	InFlight func() int64
	Dirs     ports.TopicDirs
	// Moves lists the move workers running here; nil reports none.
	Moves func() []ports.MoveReport
}

// StatusReporter answers NodeStatus for this node. Safe for concurrent use.
type StatusReporter struct{ d StatusDeps }

// NewStatusReporter returns a StatusReporter; it panics on a missing
// dependency.
func NewStatusReporter(d StatusDeps) *StatusReporter {
	if d.Self == "" || d.Drain == nil || d.Backlog == nil || d.InFlight == nil || d.Dirs == nil {
		panic("membership: status reporter needs every dependency")
	}
	return &StatusReporter{d: d}
}

// NodeStatus reports this node's drain flag, produces in flight, dispatch
// backlog, quarantined copies and move workers. The context is unused: every read is
// local.
func (r *StatusReporter) NodeStatus(context.Context) (ports.NodeStatus, error) {
	dirs, err := r.d.Dirs.TopicDirs()
	if err != nil {
		return ports.NodeStatus{}, fmt.Errorf("membership: node status: %w", err)
	}
	st := ports.NodeStatus{Node: r.d.Self, Draining: r.d.Drain.Draining(),
		ProduceInFlight: r.d.InFlight(), DispatchBacklog: r.d.Backlog(),
		Quarantine: ports.QuarantineInventory{List: []string{}}}
	st.Moves = []ports.MoveReport{}
	if r.d.Moves != nil {
		st.Moves = r.d.Moves()
	}
	for _, d := range dirs {
		if !d.Quarantine {
			continue
		}
		st.Quarantine.Copies++
		st.Quarantine.Bytes += d.Bytes
		if len(st.Quarantine.List) < quarantineListMax {
			st.Quarantine.List = append(st.Quarantine.List, d.Dir)
		}
	}
	return st, nil
}

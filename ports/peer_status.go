package ports

import (
	"context"
	"time"
)

// NodeStatus is what a node reports of itself (node RPC op 33 NodeStatus,
// internals.md §10.3, §9.5; the node_status of GET
// /v1/cluster/members?detail=true, api.md §2.17).
type NodeStatus struct {
	Node     string
	Draining bool
	// ProduceInFlight counts client produces (single or batch) being
	// accepted on the node right now.
	ProduceInFlight int64
	// DispatchBacklog counts records the ingress WAL accepted and has not
	// yet confirmed at their owners (durable next minus checkpoint: what a
	// restart would replay; an upper bound).
	DispatchBacklog uint64
	Quarantine      QuarantineInventory
	// Moves are the move workers running on the node (as destination).
	Moves []MoveReport
}

// MoveReport is one move worker as its destination reports it (api.md
// §2.17, the worker of GET /v1/cluster/moves?detail=true).
type MoveReport struct {
	Topic       string
	Partition   int32
	Source      string
	Target      string
	StartedAt   time.Time
	Phase       string // copying, frozen, flip_pending, waiting_for_source
	Attempts    int
	LastError   string
	CopiedBytes int64
	// Blocked names why the worker cannot finish the move on its own
	// once its source is dead (copy_unverifiable, source_dead_copy_behind;
	// Phase is then "blocked"); empty while it can.
	Blocked string
}

// QuarantineInventory lists the quarantined copies a node holds on disk.
type QuarantineInventory struct {
	Copies int
	Bytes  int64
	// List names the first quarantineListMax copies.
	List []string
}

// PeerStatus asks another node for its NodeStatus. Safe for concurrent
// use. Errors: a node that cannot answer (an older release's 400 included)
// is reported as a transport or refusal error; callers read it as
// "unknown", never as unhealthy.
type PeerStatus interface {
	NodeStatus(ctx context.Context, node string) (NodeStatus, error)
}

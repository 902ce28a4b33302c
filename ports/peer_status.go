package ports

import "context"

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

package ports

import "context"

// RemoteCursorReport is one remote child cursor as the node running it
// reports it (internals.md §7.4): its link state, the record it is stuck
// on (-1 when none), its last accepted request and successful target
// check (Unix ms, 0 before one) and its lag (parent records the remote
// has not accepted; -1 unknown).
type RemoteCursorReport struct {
	Partition   int32
	Child       string
	State       string
	BlockedAt   int64
	LastOKMs    int64
	LastCheckMs int64
	Lag         int64
}

// RemoteLinks reports the remote child cursors of one parent that run on
// this node.
type RemoteLinks interface {
	RemoteLinks(parent string) []RemoteCursorReport
}

// PeerRemoteLinks asks another node for the remote child cursors of one
// parent it runs (node RPC op 36, RemoteCheck). Errors: ctx.Err() or a
// transport error.
type PeerRemoteLinks interface {
	RemoteLinks(ctx context.Context, node, parent string) ([]RemoteCursorReport, error)
}

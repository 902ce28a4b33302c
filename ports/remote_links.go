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
	// OldestUnsentMs is the commit time (Unix ms) of the oldest parent
	// record the remote has not accepted; 0 when none or unknown.
	OldestUnsentMs int64
	// NextOffset is the next parent offset the cursor ships, as it last
	// persisted it (everything below reached the remote, was skipped by
	// an admin or aged out of the parent); HighWatermark is the parent
	// partition's high watermark on the owner. -1 when unknown (a cursor
	// that has not found its start, a log that cannot be peeked, or an
	// owner of an earlier build that does not report them).
	NextOffset    int64
	HighWatermark int64
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

// RemoteCheckRequest asks a member to run the target checks of remote
// against topic (internals.md §7.5), comparing with local parent Source
// when set.
type RemoteCheckRequest struct {
	Remote string
	Topic  string
	Source string
}

// RemoteCheckReport is one member's verdict of the target checks.
type RemoteCheckReport struct {
	Node              string
	Result            string // pass or fail
	Class             string
	CredentialVersion int64
	TargetID          string
	TargetServesIDs   bool
	RTTMs             int64
	CertNotAfterMs    int64 // Unix ms; 0 when unknown
	Warnings          []string
	SecurityEnabled   bool
	RaftTLS           bool
	APIHopEncrypted   bool
	Capable1000       bool
}

// RemoteCredentialReport is one node's credential cache state of one
// remote (internals.md §7.6). A node reports the remotes of its metadata
// and any entry its cache still holds for a remote deleted since: the
// remotes listing names such a remote under lingering (api.md §2.18).
type RemoteCredentialReport struct {
	Remote            string
	State             string
	CredentialVersion int64
	KeyVersion        string
	Fingerprint       string
}

// RemotePosture is one member's security posture as the posture gate reads
// it (internals.md §7.8): remotes need security on and legacy cluster auth
// off; Raft TLS is reported, not required.
type RemotePosture struct {
	Node              string
	SecurityEnabled   bool
	LegacyClusterAuth bool
	RaftTLS           bool
}

// TopicBacklog is one topic's records in a member's dispatch backlog
// (accepted, not yet committed to an owner; internals.md §7.9). Complete
// is false when the scan stopped at its bound before the end.
type TopicBacklog struct {
	Records  uint64
	Complete bool
}

// RemoteMember is what a member answers of remote replication over node
// RPC op 36: its remote child cursors of a parent, the target checks run
// from it, its credential states, its posture and a topic's dispatch
// backlog.
type RemoteMember interface {
	RemoteLinks
	MemberCheck(ctx context.Context, req RemoteCheckRequest) (RemoteCheckReport, error)
	Credentials() []RemoteCredentialReport
	Posture() RemotePosture
	TopicBacklog(ctx context.Context, topic string) (TopicBacklog, error)
}

// PeerRemoteMembers asks another member (op 36).
type PeerRemoteMembers interface {
	PeerRemoteLinks
	MemberCheck(ctx context.Context, node string, req RemoteCheckRequest) (RemoteCheckReport, error)
	Credentials(ctx context.Context, node string) ([]RemoteCredentialReport, error)
	Posture(ctx context.Context, node string) (RemotePosture, error)
	TopicBacklog(ctx context.Context, node, topic string) (TopicBacklog, error)
}

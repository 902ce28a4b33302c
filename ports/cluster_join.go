package ports

import (
	"context"

	"github.com/narad/narad/domain/meta"
)

// JoinRequest is a node's request to enter the metadata Raft shard (node
// RPC op 21 JoinCluster, internals.md §9.3).
type JoinRequest struct {
	// NodeID is the joiner's member id (its replica id is meta.ReplicaID).
	NodeID string
	// RaftAddr is the host:port the joiner's Raft listens on.
	RaftAddr string
	// DataDirEmpty says the joiner starts from an empty data directory (a
	// deliberate re-add under a tombstoned id, §9.5).
	DataDirEmpty bool
	// EntryTypes is the newest metadata entry type the joiner applies; 0
	// means the legacy set (§8.3).
	EntryTypes meta.EntryType
}

// Join statuses of an admission (§9.3).
const (
	JoinStaged   = "staged"   // added as a non-voter
	JoinDeferred = "deferred" // a non-voter not promoted (yet)
	JoinPromoted = "promoted" // a non-voter made a voter now
	JoinVoter    = "voter"    // a voter already (or added as one)
)

// JoinAdmission is a 200 answer to a join.
type JoinAdmission struct {
	Status string // JoinStaged, JoinDeferred, JoinPromoted or JoinVoter
	Reason string // why a deferred node was not promoted; may be empty
}

// ClusterJoiner sends join requests to other nodes (the joiner's side of
// op 21). Safe for concurrent use.
type ClusterJoiner interface {
	// Join asks the node whose node-RPC address is addr to admit req.
	// Errors: a *domain.NotLeaderError (domain.ErrNotMetaLeader, naming the
	// leader the node knows), domain.ErrNoCluster, domain.ErrJoinTombstoned,
	// domain.ErrOlderRelease, domain.ErrUnavailable, domain.ErrInvalidArgument,
	// ctx.Err(), or a transport error (the node was not reached or did not
	// answer; a join is idempotent, so the caller simply asks again).
	Join(ctx context.Context, addr string, req JoinRequest) (JoinAdmission, error)
}

// JoinAnswerer decides the answer to a join request arriving at this node
// (the server side of op 21). Safe for concurrent use.
type JoinAnswerer interface {
	// AnswerJoin admits req when this node leads, else refuses it with the
	// errors ClusterJoiner.Join lists (a transport adapter carries them).
	AnswerJoin(ctx context.Context, req JoinRequest) (JoinAdmission, error)
}

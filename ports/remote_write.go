package ports

import (
	"context"

	"github.com/narad/narad/domain/meta"
)

// RemoteWrite is one remote or remote-child write the node that took it
// hands to the metadata leader (node RPC op 35, internals.md §7.8): the
// leader checks the release gate again, proposes the one entry and writes
// the authoritative audit line. A password travels only sealed inside the
// entry.
type RemoteWrite struct {
	// Op is the sub-operation: the audit event name (AuditRemote*).
	Op string
	// Actor is the caller's name; RequestID ties the ingress's audit line
	// to the leader's.
	Actor     string
	RequestID string
	// Envelope is the entry to propose, of a remote type (33–37).
	Envelope meta.Envelope
}

// RemoteWriteLeader proposes remote writes on the leader. Errors:
// domain.ErrNotMetaLeader (this node does not lead), a *domain.Refusal
// wrapping domain.ErrPrecondition (the release gate held it back),
// domain.ErrInvalidArgument (not a remote entry), or Propose's errors.
type RemoteWriteLeader interface {
	LeaderWrite(ctx context.Context, w RemoteWrite) (MetaApplied, error)
}

// PeerRemoteWriter hands a remote write to the leader node (op 35).
// Errors: domain.ErrOlderRelease (the leader does not serve op 35), the
// leader's refusal as its domain error, or a transport error (the write
// may still apply).
type PeerRemoteWriter interface {
	RemoteWrite(ctx context.Context, node string, w RemoteWrite) (MetaApplied, error)
}

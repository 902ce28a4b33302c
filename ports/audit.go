package ports

// Audit event names (internals.md §12.4). Part of the audit log's format.
const (
	AuditUserCreate        = "user.create"
	AuditUserDelete        = "user.delete"
	AuditUserGrants        = "user.grants"
	AuditUserPassword      = "user.password"
	AuditRootSeeded        = "user.root_seeded"
	AuditAuthFailed        = "auth.failed"
	AuditAuthThrottled     = "auth.throttled"
	AuditAccessDenied      = "access.denied"
	AuditTopicDelete       = "topic.delete"
	AuditDecommission      = "cluster.decommission"
	AuditDecommissionStop  = "cluster.decommission.cancel"
	AuditClusterStreamDeny = "cluster.stream_rejected"

	// Remotes (internals.md §7.10).
	AuditRemoteCreate      = "remote.create"
	AuditRemoteUpdate      = "remote.update"
	AuditRemoteDelete      = "remote.delete"
	AuditRemoteTest        = "remote.test"
	AuditRemoteReencrypt   = "remote.reencrypt"
	AuditRemoteList        = "remote.list"
	AuditRemoteGet         = "remote.get"
	AuditRemoteChildCreate = "remote_child.create"
	AuditRemoteChildPause  = "remote_child.pause"
	AuditRemoteChildResume = "remote_child.resume"
	AuditRemoteChildAccept = "remote_child.accept_target"
	AuditRemoteChildSkip   = "remote_child.skip"
	AuditRemoteChildDelete = "remote_child.delete"
)

// Audit outcomes.
const (
	AuditOK      = "ok"
	AuditRefused = "refused"
	AuditFailed  = "failed"
	// AuditCommitted is the leader's outcome of a remote write it
	// proposed and saw applied (internals.md §7.10).
	AuditCommitted = "committed"
)

// AuditEvent is one line of the audit log. It never holds a password, a
// hash or a secret.
type AuditEvent struct {
	// Event is one of the Audit* names.
	Event string
	// Actor is who asked: a username, "node:<id>" for the node itself, or
	// the client address with security off.
	Actor string
	// Subject is what was acted on ("user bob", "topic orders").
	Subject string
	// Outcome is AuditOK, AuditRefused or AuditFailed.
	Outcome string
	// Reason says why a refusal or failure happened (the client's message).
	Reason string
	// Remote is the client's address, when a client asked.
	Remote string
	// RequestID ties the lines of one remote write: the receiving node's
	// and the leader's (internals.md §7.10).
	RequestID string
	// Leader marks the leader's authoritative line of a remote write.
	Leader bool
}

// AuditLog records security-relevant events on their own logger
// (component=audit). Record never blocks on I/O for long and never fails;
// safe for concurrent use.
type AuditLog interface {
	Record(e AuditEvent)
}

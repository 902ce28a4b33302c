package quicpeer

import (
	"errors"
	"fmt"
)

// Sentinel errors of package quicpeer. Errors returned by Client.Call wrap
// one of them and, for deadlines and cancellations, the context's error too.
var (
	// ErrAuth: a side could not prove the cluster secret (a wrong secret on
	// either end, or a peer that is not a Narad node).
	ErrAuth = errors.New("quicpeer: cluster authentication failed")
	// ErrFrameTooLarge: a frame's payload exceeds 16 MiB (or a proof frame
	// exceeds 64 bytes).
	ErrFrameTooLarge = errors.New("quicpeer: frame too large")
	// ErrBadFrame: bytes that are not a frame (bad magic, version, type,
	// reserved bits, a truncated header or payload, a mismatched request id).
	ErrBadFrame = errors.New("quicpeer: malformed frame")
	// ErrUnreachable: the peer could not be dialled, is in dial backoff, or
	// its connection broke during the call.
	ErrUnreachable = errors.New("quicpeer: peer unreachable")
	// ErrTimeout: the call's deadline passed before the reply arrived.
	ErrTimeout = errors.New("quicpeer: call timed out")
	// ErrRemote: the peer's handler (or the peer's transport) answered with
	// an error frame; the *RemoteError carries its message.
	ErrRemote = errors.New("quicpeer: remote error")
	// ErrUnsupportedOp: the peer has no handler for the operation (the
	// mixed-version signal of internals.md §10.3).
	ErrUnsupportedOp = errors.New("quicpeer: unsupported rpc operation")
	// ErrClosed: the Client or Server was closed.
	ErrClosed = errors.New("quicpeer: closed")
	// ErrNoSecret: a Client or Server was built without a cluster secret.
	ErrNoSecret = errors.New("quicpeer: no cluster secret")
	// ErrBadPayload: an operation's request or reply payload does not decode
	// (truncated, trailing bytes, a count or length past its cap).
	ErrBadPayload = errors.New("quicpeer: malformed operation payload")
	// ErrPayloadRefused: the peer answered that it could not decode the
	// request (bad_payload); from a well-formed request, the mark of an
	// older release that does not know a trailing field.
	ErrPayloadRefused = errors.New("quicpeer: peer refused the request payload")
	// ErrNoAddress: the Resolver knows no address for the node. Like a
	// transport failure, it leaves a commit's outcome unknown.
	ErrNoAddress = errors.New("quicpeer: no address for node")
)

// msgUnsupportedOp is the error-frame message for an unknown op.
const msgUnsupportedOp = "unsupported rpc operation"

// RemoteError is an error frame received from a peer.
type RemoteError struct {
	Peer    string
	Op      Op
	Message string
	Code    string // the reply's code, when the error came as a reply
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("quicpeer: %s answered op %d: %s", e.Peer, e.Op, e.Message)
}

// Is reports ErrRemote for every remote error, ErrUnsupportedOp for the
// peer's refusal of an unknown op and ErrPayloadRefused for its refusal of
// a payload it could not decode.
func (e *RemoteError) Is(target error) bool {
	return target == ErrRemote || (target == ErrUnsupportedOp && e.Message == msgUnsupportedOp) ||
		(target == ErrPayloadRefused && e.Code == codeBadPayload)
}

package domain

import "errors"

// Transport outcomes of a request carried to another node
// (ports.PeerForwarder, ports.PeerCommitter). Every failure of such a
// request wraps exactly one of them, or is the other node's own answer (a
// refusal: one of its domain errors). The caller's cancellation or
// deadline is wrapped in one of them too, so the class is never lost.
var (
	// ErrNotSent: the request never left this node (no address, a dial
	// that failed or is backing off, no connection or stream, no free slot
	// before the deadline, a peer that refused to authenticate us before
	// reading it): the other node surely did not act on it.
	ErrNotSent = errors.New("domain: the request was not sent to the peer")
	// ErrNoAnswer: the request left this node but no usable answer came
	// back (deadline, broken connection or stream, an unreadable reply):
	// the other node may or may not have acted on it.
	ErrNoAnswer = errors.New("domain: the peer did not answer")
)

// Forwarding refusals added by the consume routing (api.md §2.14, §2.15,
// §3.3).
var (
	// ErrOwnerNoAnswer: a request forwarded to the partition's owner got no
	// answer (a transport failure); the owner may or may not have acted.
	// Its Refusal carries the client message (502, plain text).
	ErrOwnerNoAnswer = errors.New("domain: the partition owner did not answer")
	// ErrOwnerNotReached: a forwarded ack, extend or nack never left this
	// node; nothing was applied. Its Refusal carries the client message
	// (503, plain text, Retry-After: 1 on a single ack).
	ErrOwnerNotReached = errors.New("domain: the request did not reach the partition owner")
)

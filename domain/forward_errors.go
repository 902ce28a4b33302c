package domain

import "errors"

// Forwarding refusals added by the consume routing (api.md §2.14, §2.15,
// §3.3).
var (
	// ErrOwnerNoAnswer: a request forwarded to the partition's owner got no
	// answer (a transport failure); the owner may or may not have acted.
	// Its Refusal carries the client message (502, plain text).
	ErrOwnerNoAnswer = errors.New("domain: the partition owner did not answer")
)

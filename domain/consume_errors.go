package domain

import "errors"

// Consume refusals added by the consume use case.
var (
	// ErrTooManyConsumes: the caller's identity already has as many consume
	// requests in flight on this node as http.max_consume_in_flight_per_identity
	// allows; its Refusal carries the limit (429).
	ErrTooManyConsumes = errors.New("domain: too many in-flight consume requests for this identity")
)

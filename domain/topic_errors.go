package domain

import "errors"

// Topic administration outcomes that the shared refusals do not cover.
var (
	// ErrNotImplemented: the request is well formed but this build does not
	// serve it yet (501); its Refusal names what is missing.
	ErrNotImplemented = errors.New("domain: not implemented on this node")
	// ErrNoRedrive: the topic exists but no redrive job was ever started on
	// it (404).
	ErrNoRedrive = errors.New("domain: no redrive job on this topic")
)

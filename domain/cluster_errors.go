package domain

import "errors"

// Refusals of the cluster routes and of a draining node (api.md §2.17).
var (
	// ErrMemberNotFound: no member record (or Raft server) has that id
	// (404 "not found").
	ErrMemberNotFound = errors.New("domain: member not found")
	// ErrDraining: this node is being decommissioned and takes no client
	// produce (503 with Retry-After: 1; the client retries on another node).
	ErrDraining = errors.New("domain: node is draining")
	// ErrNoMove: the partition has no move in flight, or not the one named
	// (409).
	ErrNoMove = errors.New("domain: no move in flight")
	// ErrNoAssignment: the partition is not placed on any node (404).
	ErrNoAssignment = errors.New("domain: partition has no assignment")
)

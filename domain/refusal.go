package domain

import "errors"

// Client refusals shared by the use cases. The HTTP adapter maps each to its
// status; where the wire message carries detail, the use case returns a
// *Refusal whose Detail is that message.
var (
	ErrTopicNotFound = errors.New("domain: topic not found")
	ErrTopicExists   = errors.New("domain: topic already exists")
	// ErrTopicNameCase: another topic's name differs only in letter case (409;
	// the SDK matches "differs only in letter case").
	ErrTopicNameCase = errors.New("domain: topic name differs only in letter case from an existing topic")
	// ErrTopicChanged: a compare-and-set lost to a concurrent change (409;
	// the SDK matches "topic changed since it was read").
	ErrTopicChanged = errors.New("domain: topic changed since it was read")
	// ErrEmptyMessage: a produce without a body (400 "message required").
	ErrEmptyMessage = errors.New("domain: message required")
	// ErrPartitionOutOfRange: a partition at or past the topic's count (400).
	ErrPartitionOutOfRange = errors.New("domain: partition out of range")
	// ErrDelayedChildProduce: direct produce to a delay child (409).
	ErrDelayedChildProduce = errors.New("domain: direct produce to a delayed child topic is not allowed")
	// ErrInvalidArgument: a request the rules refuse; its Refusal says why (400).
	ErrInvalidArgument = errors.New("domain: invalid argument")
	// ErrConflict: a request that conflicts with the current state; its
	// Refusal says how (409).
	ErrConflict = errors.New("domain: conflict")
	// ErrUnavailable: the cluster cannot answer now (no leader, no quorum,
	// not caught up); retry (503).
	ErrUnavailable = errors.New("domain: unavailable, retry")
	// ErrNotOwner: the partition is not (or no longer) owned here (421).
	ErrNotOwner = errors.New("domain: this node does not own the requested partition")
	// ErrOwnerDown: the partition's owner is marked dead (503, Retry-After 1).
	ErrOwnerDown = errors.New("domain: partition owner is down")
)

// Refusal is a client refusal with the message the client should read.
type Refusal struct {
	Err    error  // the sentinel, for errors.Is
	Detail string // the client-facing message
}

// Refuse returns a *Refusal of sentinel err with the given client message.
func Refuse(err error, detail string) error { return &Refusal{Err: err, Detail: detail} }

func (r *Refusal) Error() string { return r.Detail }
func (r *Refusal) Unwrap() error { return r.Err }

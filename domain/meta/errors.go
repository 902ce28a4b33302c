package meta

import "errors"

// Decoding errors. An entry that fails to decode stops the replica that meets
// it (fail-stop): skipping it would let replicas diverge.
var (
	// ErrUnknownEventVersion: the envelope's format version is newer than this
	// build understands.
	ErrUnknownEventVersion = errors.New("meta: unknown event format version")
	// ErrUnknownEntryType: the entry type is unknown to this build or not
	// applied by it.
	ErrUnknownEntryType = errors.New("meta: unknown entry type")
	// ErrCorruptEvent: the bytes do not decode into the entry they claim to be.
	ErrCorruptEvent = errors.New("meta: corrupt event")
	// ErrInvalidEvent: the event breaks a pure validation rule (bad name,
	// missing id, out-of-range number). Proposers check before proposing;
	// apply answers CodeInvalid for one that slipped through.
	ErrInvalidEvent = errors.New("meta: invalid event")
	// ErrCorruptView: a stored view record does not decode. The store is
	// damaged; the replica stops rather than apply on top of it.
	ErrCorruptView = errors.New("meta: corrupt view record")
)

// Refusals, one per Result code. Result.Err wraps them with the detail.
var (
	// ErrExists: the thing to create exists (topic, user, member, remote, row).
	ErrExists = errors.New("meta: already exists")
	// ErrNotFound: the thing to change or delete does not exist.
	ErrNotFound = errors.New("meta: not found")
	// ErrConflict: a compare-and-set missed: the record changed since it was
	// read (other incarnation, newer heartbeat, other move target).
	ErrConflict = errors.New("meta: changed since it was read")
	// ErrRefused: a rule of the entry forbids it (schema caps, retention floor
	// for a delay child, a live assignment row, a tombstoned member).
	ErrRefused = errors.New("meta: refused by rule")
	// ErrProtected: the root account cannot be deleted or lose its grants.
	ErrProtected = errors.New("meta: protected")
)

// Store errors shared by every MetadataStore implementation.
var (
	// ErrUnavailable: no quorum, no leader, a timeout or a busy node. The
	// outcome of a proposal that returned it is unknown. The API answers 503.
	ErrUnavailable = errors.New("meta: metadata store unavailable")
	// ErrStopped: the replica stopped (closed, or fail-stopped on an entry it
	// could not apply). Writes and barriers answer 503; the process exits.
	ErrStopped = errors.New("meta: metadata store stopped")
	// ErrNotCaughtUp: the replica has not caught up with the leader.
	ErrNotCaughtUp = errors.New("meta: replica not caught up")
)

// ErrTypeHeldBack: an entry's type is newer than some server or member
// applies (the entry-type gate) and it has no legacy form to propose
// instead. The API answers 412 naming the holder.
var ErrTypeHeldBack = errors.New("meta: entry type held back by a member on an older release")

// ErrWatchLagged ends a subscription whose subscriber fell a whole buffer
// behind: it must re-read the views it cares about and subscribe again.
var ErrWatchLagged = errors.New("meta: watcher fell behind")

package ports

import (
	"context"

	"github.com/narad/narad/domain/meta"
)

// MetaApplied is the outcome of a proposal: the Raft index it was applied
// at and what apply decided. A refusal (Result not OK) is applied and final:
// retrying the same entry gets the same refusal unless the views changed.
type MetaApplied struct {
	Index  uint64
	Result meta.Result
}

// MetadataProposer writes metadata. Safe for concurrent use.
type MetadataProposer interface {
	// Propose validates env.Event (meta.ErrInvalidEvent), replicates it
	// through Raft (forwarded to the leader when this node follows) and
	// returns once THIS node's replica has applied it, so a read on this node
	// right after Propose sees the entry. The outcome of an error other than
	// ErrInvalidEvent is unknown: the entry may still apply. Errors:
	// meta.ErrInvalidEvent, meta.ErrUnavailable (no quorum, no leader,
	// timeout, busy: the API answers 503), meta.ErrStopped, ctx.Err().
	Propose(ctx context.Context, env meta.Envelope) (MetaApplied, error)
}

// MetadataTopics reads topic views from the local replica, without a network
// hop. Reads may lag the leader; use MetadataFreshness before trusting an
// absence. Safe for concurrent use; returned values belong to the caller.
// Errors: meta.ErrStopped, meta.ErrCorruptView, or a storage error.
type MetadataTopics interface {
	// Topic returns the topic named name, ok=false when absent.
	Topic(name string) (t meta.Topic, ok bool, err error)
	// ListTopics returns up to limit topics whose names sort after after,
	// by name (keyset paging; limit <= 0 returns every topic).
	ListTopics(after string, limit int) ([]meta.Topic, error)
	// Schemas returns the topic's schema history, oldest first.
	Schemas(topic string) ([]meta.SchemaVersion, error)
	// Links returns every fan-out link by child name.
	Links() ([]meta.Link, error)
}

// MetadataCluster reads placement and membership views from the local
// replica. Same concurrency, ownership and errors as MetadataTopics.
type MetadataCluster interface {
	// Assignments returns the topic's rows by partition.
	Assignments(topic string) ([]meta.Assignment, error)
	// EachAssignment calls visit with each of the topic's rows by
	// partition, without copying them for the caller (the read every
	// consume makes). Same errors as Assignments.
	EachAssignment(topic string, visit func(meta.Assignment)) error
	// Assignment returns one partition's row, ok=false when unplaced.
	Assignment(topic string, partition int32) (a meta.Assignment, ok bool, err error)
	// Moves returns every partition with a move target.
	Moves() ([]meta.Move, error)
	// Members returns every member record by id.
	Members() ([]meta.Member, error)
	// Tombstones returns the decommissioned ids.
	Tombstones() ([]meta.Tombstone, error)
}

// MetadataAccess reads accounts and remotes from the local replica. Same
// concurrency, ownership and errors as MetadataTopics.
type MetadataAccess interface {
	User(name string) (u meta.User, ok bool, err error)
	Users() ([]meta.User, error)
	Remotes() ([]meta.Remote, error)
	// RemoteSalt is the cluster's salt for remote credentials, found=false
	// before the first remote.
	RemoteSalt() (salt []byte, found bool, err error)
	// RemoteKeySeals is how many passwords key version keyVersion has
	// sealed (the seal cap's count, internals.md §7.6), 0 when none.
	RemoteKeySeals(keyVersion string) (int64, error)
}

// MetadataHistory reads the bounded journal of applied entries (the newest
// meta.JournalKeep by default), refusals included.
type MetadataHistory interface {
	// History returns up to limit entries with Seq < before (0 = from the
	// newest), newest first.
	History(before uint64, limit int) ([]meta.JournalEntry, error)
}

// MetadataFreshness says how far the local replica can be trusted. An
// election proves a leader's log, not its state machine: every "my state is
// authority" decision passes Barrier first and reads again after it.
type MetadataFreshness interface {
	// AppliedIndex is the index of the newest entry the replica applied.
	AppliedIndex() uint64
	// Versions are the replica's per-view counters (meta.View): a pass that
	// decodes a whole view may skip itself while the views it reads have
	// not moved since it last ran. Counters start at zero when the replica
	// opens and a snapshot install moves them all. Cheap; never blocks.
	Versions() meta.Versions
	// CaughtUp reports whether a leader is known, this node heard from it (or
	// is it) within 5 s, and a linearizable read proved local apply reached
	// the leader's commit index within those 5 s. Cheap; never blocks.
	CaughtUp() bool
	// Barrier returns once local apply covers every entry committed before
	// the call (a linearizable ReadIndex through the leader), within 5 s or
	// ctx, whichever is shorter. Errors: meta.ErrUnavailable, meta.ErrStopped,
	// ctx.Err(). Any error means "do not trust local state".
	Barrier(ctx context.Context) error
	// IsLeader reports whether this node currently leads the metadata shard.
	IsLeader() bool
	// Leader returns the leader's replica id as last known locally.
	Leader() (replicaID uint64, ok bool)
}

// MetaChange is one applied entry as a watcher sees it. Restored marks a
// snapshot install: any view may have changed and Envelope is empty.
type MetaChange struct {
	Index    uint64
	Envelope meta.Envelope
	Result   meta.Result
	Restored bool
}

// MetaSubscription delivers applied entries in index order.
type MetaSubscription interface {
	// C yields changes; it is closed when the subscription ends.
	C() <-chan MetaChange
	// Err says why C closed: nil after Close, meta.ErrWatchLagged when the
	// subscriber fell a whole buffer behind (re-read, subscribe again),
	// meta.ErrStopped when the store stopped.
	Err() error
	// Close ends the subscription. Idempotent.
	Close()
}

// MetadataWatcher lets background workers (controller, fan-out runner) react
// to metadata changes instead of polling.
type MetadataWatcher interface {
	// Watch subscribes to entries applied from now on, buffering up to
	// buffer changes (minimum 1). Apply never blocks on a subscriber.
	Watch(buffer int) (MetaSubscription, error)
}

// MetadataStore is the node's replica of the cluster metadata: written
// through Raft, read locally, never trusted blindly after a restart.
type MetadataStore interface {
	MetadataProposer
	MetadataTopics
	MetadataCluster
	MetadataAccess
	MetadataHistory
	MetadataFreshness
	MetadataWatcher
}

// RaftMembership is the metadata shard's Raft configuration: replica id →
// Raft address.
type RaftMembership struct {
	Voters    map[uint64]string
	NonVoters map[uint64]string
	Removed   map[uint64]struct{}
}

// MetadataMembership changes the Raft configuration of the metadata shard.
// Calls go through the leader; each returns once the change committed.
// Errors: meta.ErrUnavailable (no quorum, not leader, timeout, a change
// already in flight), meta.ErrStopped, meta.ErrRefused (a removed replica id
// cannot come back), ctx.Err().
type MetadataMembership interface {
	// Membership returns the configuration (a linearizable read).
	Membership(ctx context.Context) (RaftMembership, error)
	// AddNonVoter stages a replica: it replicates but does not vote.
	AddNonVoter(ctx context.Context, replicaID uint64, raftAddr string) error
	// AddVoter adds a replica as a voter, or promotes a non-voter.
	AddVoter(ctx context.Context, replicaID uint64, raftAddr string) error
	// RemoveReplica removes a voter or non-voter for good.
	RemoveReplica(ctx context.Context, replicaID uint64) error
}

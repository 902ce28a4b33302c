package ports

import "github.com/narad/narad/domain"

// ConsumerOffsets is one partition's consumption progress as persisted: only
// settled (acked or skipped) positions, never leases.
type ConsumerOffsets struct {
	// Committed is the frontier: every offset at or below it is settled; -1
	// when nothing is.
	Committed int64
	// AckedAhead lists offsets acked above Committed, ascending, no
	// duplicates. A store may keep only a prefix (the lowest offsets) when the
	// set is too large for its record: the rest are redelivered, never lost.
	AckedAhead []int64
}

// NoOffsets is the progress of a partition nothing was ever settled on.
var NoOffsets = ConsumerOffsets{Committed: -1}

// OffsetStore persists the consumer frontier and acked-ahead set of each
// local partition, in the partition's own directory (internals.md §5.8). It
// is driven by one committer: Write puts a record in the page cache (a
// process crash keeps it), Sync makes what was written durable (a machine
// crash keeps it), Level brings the plain frontier file level.
//
// No call ever recovers a frontier past a value it was given, and no call
// creates a partition's directory: a partition whose directory is missing,
// or belongs to another incarnation of the topic, is stranded and nothing is
// written for it (each write answers nil) until Forget.
//
// Calls on different partitions may run concurrently; calls on one partition
// must not (the committer serialises them). Slices passed in are not
// retained; slices returned belong to the caller.
type OffsetStore interface {
	// Load reads the persisted progress of ref: the larger frontier of the
	// persisted records wins. A partition with nothing persisted (or a
	// directory of another incarnation) answers NoOffsets. Load neither
	// primes nor writes.
	Load(ref domain.PartitionRef) (ConsumerOffsets, error)
	// Write records o as ref's newest progress without syncing it. The first
	// Write after start (or after Forget) primes the partition's files first.
	Write(ref domain.PartitionRef, o ConsumerOffsets) error
	// Sync makes the newest Write of ref durable. After a failed Sync the
	// caller must Write again before the next Sync.
	Sync(ref domain.PartitionRef) error
	// Level overwrites ref's plain frontier record with committed and syncs
	// it. committed must be a frontier already given to Write.
	Level(ref domain.PartitionRef, committed int64) error
	// Forget drops every descriptor and memory of ref; after it returns no
	// earlier Write reaches the disk through this store.
	Forget(ref domain.PartitionRef)
	// Close releases every descriptor. It writes nothing.
	Close() error
}

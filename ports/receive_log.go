package ports

import (
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
)

// ReceiveLog persists each local partition's receive-count table (issue 19's
// dead letters, domain/deadletter) in the partition's own directory, beside
// the consumer offsets, so that it moves with the partition. A table is
// rebuilt by replaying the records Load answers, in order, with
// deadletter.Table.Apply.
//
// Like OffsetStore it never creates a partition's directory: a partition
// whose directory is missing, or belongs to another incarnation of the
// topic, is stranded and Append and Compact answer
// domain.ErrLogClosed (wrapped) until Forget: the partition is not served here. Calls on different partitions
// may run concurrently; calls on one partition must not. Slices passed in
// are not retained; slices returned belong to the caller.
type ReceiveLog interface {
	// Load reads ref's records in the order they were appended, stopping
	// at the first that is torn or fails its check (a crash mid-append):
	// nothing after it was acknowledged by Append. A partition with no
	// file answers no records.
	Load(ref domain.PartitionRef) ([]deadletter.Record, error)
	// Append adds recs to ref's file and makes them durable (one
	// fdatasync) before it returns nil; after an error none of recs may be
	// relied on, and the file may hold any prefix of them.
	Append(ref domain.PartitionRef, recs []deadletter.Record) error
	// Compact replaces ref's file by one holding exactly live, atomically:
	// a crash leaves either the old file or the new one. It returns once
	// the new file and its directory entry are durable.
	Compact(ref domain.PartitionRef, live []deadletter.Record) error
	// Size is the byte length of ref's file as this store last wrote or
	// read it (0 when unknown), so the caller can choose when to compact.
	Size(ref domain.PartitionRef) int64
	// Forget drops every descriptor and memory of ref; after it returns no
	// earlier Append reaches the disk through this store.
	Forget(ref domain.PartitionRef)
	// Close releases every descriptor. It writes nothing.
	Close() error
}

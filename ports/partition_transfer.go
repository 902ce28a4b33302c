package ports

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
)

// TransferFile is one segment file of a partition as a move copies it: its
// name in the partition's directory and how many bytes of it to copy.
type TransferFile struct {
	Name string
	Size int64
}

// TransferListing is what a move's source lists of a partition it owns
// (internals.md §11.3-11.4, node RPC op 22): the committed boundary first,
// then every segment, ascending, each with the bytes that hold committed
// records only, so a copy of exactly those bytes recovers to exactly
// HighWatermark and never shows a record above it.
type TransferListing struct {
	HighWatermark int64
	Segments      []TransferFile
	// Side are the files beside the segments that move with the
	// partition: the consumer position (consumer.offset, consumer.ahead),
	// the receive counts of dead letters (consumer.receives, ReceiveLog)
	// and the fan-out cursors (fanout-<child>.offset), whole.
	Side []TransferFile
	// Marker is the partition's move.marker when a move installed it
	// here; nil when it never moved here.
	Marker *MoveMarker
}

// MoveMarker is what a move's install records beside the partition
// (internals.md §11.4): the boundary it promoted, whether the source was
// dead (a force-promote), and the fan-out links of the partition's topic at
// install with their epochs. A cursor of such a link that finds no file
// resumes from the oldest retained offset; the stale-copy sweep of a former
// owner trusts only an owner that holds one.
type MoveMarker struct {
	PromotedHighWatermark int64        `json:"promoted_hwm"`
	Forced                bool         `json:"force_promoted"`
	Links                 []MarkerLink `json:"links"`
}

// MarkerLink is one fan-out link a move.marker names.
type MarkerLink struct {
	Child string `json:"child"`
	Epoch string `json:"epoch"`
}

// Has reports whether m names the link to child at epoch.
func (m MoveMarker) Has(child, epoch string) bool {
	for _, l := range m.Links {
		if l.Child == child && l.Epoch == epoch {
			return true
		}
	}
	return false
}

// PartitionTransfer reads a partition's files for a move (the source
// side). Safe for concurrent use with commits and reads.
type PartitionTransfer interface {
	// TransferListing lists ref's segments; a closed log is opened first
	// (unstamped, so idle eviction closes it again), so the boundary is the
	// recovered one, never 0 for a partition that holds records.
	TransferListing(ref domain.PartitionRef) (TransferListing, error)
	// ReadTransferChunk reads up to max bytes of file name (a segment or
	// a side file) from off; fewer at the end of the file, none past it.
	// Any other name is refused (domain.ErrInvalidArgument); a file gone
	// (retention) answers domain.ErrOffsetGone.
	ReadTransferChunk(ref domain.PartitionRef, name string, off int64, max int) ([]byte, error)
}

// PartitionFreezer stops commits to a partition a move is about to flip
// (internals.md §11.3 steps 3-5). Safe for concurrent use.
type PartitionFreezer interface {
	// Freeze stops commits to ref for ttl and lists it once no commit is
	// in flight. An empty token starts a freeze and returns its token; the
	// token of the freeze that holds prolongs it; any other token, or a
	// freeze that lapsed, is refused with domain.ErrConflict.
	Freeze(ref domain.PartitionRef, token string, ttl time.Duration) (string, TransferListing, error)
}

// PartitionInstaller stages a moved partition's copy and installs it (the
// destination side, internals.md §11.3 step 6). Names are those of a
// TransferListing. Safe for concurrent use across partitions.
type PartitionInstaller interface {
	// StagingReset empties ref's staging.
	StagingReset(ref domain.PartitionRef) error
	// StagingRemove removes ref's staging (a move that ended here).
	StagingRemove(ref domain.PartitionRef) error
	// StagingSize is how many bytes of name are staged (0 when none).
	StagingSize(ref domain.PartitionRef, name string) (int64, error)
	// StagingWrite writes b at off of name, creating it.
	StagingWrite(ref domain.PartitionRef, name string, off int64, b []byte) error
	// StagingTruncate cuts name to size.
	StagingTruncate(ref domain.PartitionRef, name string, size int64) error
	// StagingKeep removes every staged file not in keep.
	StagingKeep(ref domain.PartitionRef, keep map[string]bool) error
	// Install makes the staged copy the partition with boundary
	// m.PromotedHighWatermark and writes m as its move.marker; a directory
	// already there is set aside, never deleted.
	Install(ref domain.PartitionRef, m MoveMarker) error
	// Uninstall takes an installed copy whose flip did not commit back to
	// staging, so the next attempt resumes from it: only while the topic
	// directory still names ref's incarnation (domain.ErrConflict
	// otherwise, and nothing moves).
	Uninstall(ref domain.PartitionRef) error
}

// PeerTransfer is the destination's side of the copy: it asks the source
// node over the node RPC (ops 22-24). Errors are the source's refusals as
// their domain sentinels, or transport errors. Safe for concurrent use.
type PeerTransfer interface {
	TransferListing(ctx context.Context, node string, ref domain.PartitionRef) (TransferListing, error)
	FetchTransferChunk(ctx context.Context, node string, ref domain.PartitionRef, name string, off int64, max int) ([]byte, error)
	PrepareHandoff(ctx context.Context, node string, ref domain.PartitionRef, token string) (string, TransferListing, error)
}

// StaleCopies finds and drops the copies of partitions this node no
// longer owns (internals.md §11.6, the stale-copy sweep). Safe for
// concurrent use.
type StaleCopies interface {
	// LocalPartitions lists the partition directories here, each with the
	// incarnation its topic directory is stamped with.
	LocalPartitions() ([]domain.PartitionRef, error)
	// DropStaleCopy deletes ref's directory when reclaim is set and its
	// recovered boundary is at most guard, and sets it aside (never
	// deleted) otherwise; it answers whether it deleted. Destructive:
	// callers confirm with the Raft leader first.
	DropStaleCopy(ref domain.PartitionRef, reclaim bool, guard int64) (deleted bool, err error)
	// StagedPartitions lists the partitions with a move's staging here
	// (topic and partition only: staging carries no incarnation).
	StagedPartitions() ([]domain.PartitionRef, error)
}

// MoveMarkers reads the move.marker an install left beside a partition.
// Safe for concurrent use.
type MoveMarkers interface {
	// MoveMarker returns ref's marker; ok is false when no move installed
	// the partition here.
	MoveMarker(ref domain.PartitionRef) (m MoveMarker, ok bool, err error)
}

package ports

import "github.com/narad/narad/domain"

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
}

// PartitionTransfer reads a partition's files for a move (the source
// side). Safe for concurrent use with commits and reads.
type PartitionTransfer interface {
	// TransferListing lists ref's segments; a closed log is opened first
	// (unstamped, so idle eviction closes it again), so the boundary is the
	// recovered one, never 0 for a partition that holds records.
	TransferListing(ref domain.PartitionRef) (TransferListing, error)
	// ReadTransferChunk reads up to max bytes of segment name from off;
	// fewer at the end of the file, none past it. A name that is not a
	// segment file is refused (domain.ErrInvalidArgument); a segment gone
	// (retention) answers domain.ErrOffsetGone.
	ReadTransferChunk(ref domain.PartitionRef, name string, off int64, max int) ([]byte, error)
}

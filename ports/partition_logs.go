package ports

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
)

// LogBounds is what a partition log holds: offsets in [Oldest, HighWatermark)
// are readable, save gaps left by corruption.
type LogBounds struct {
	Oldest        int64
	HighWatermark int64
	// Frozen is set while a move's freeze holds the partition (internals.md
	// §11.3 step 3): no commit lands and no new lease is reserved.
	Frozen bool
}

// LogStats describes a partition log's storage (api.md §2.4's partition
// statistics). NextOffset is the offset the next append receives: it may
// lead HighWatermark while appended or hidden-tail records await a commit.
// OldestSegmentAt is the last write of the oldest segment (its file's
// modification time once closed): retention deletes that segment when this
// is older than the retention window. It is zero when unknown or when the
// oldest segment holds nothing.
type LogStats struct {
	Segments        int   // segment files on disk
	SizeBytes       int64 // bytes of the segment files
	OldestOffset    int64
	NextOffset      int64
	HighWatermark   int64
	OldestSegmentAt time.Time
}

// PartitionWriter commits records to partition logs. One writer per
// partition: the adapter serialises commits on the same partition.
type PartitionWriter interface {
	// CommitDurable appends recs (Offset ignored, CommittedAtMs proposed),
	// fsyncs once, verifies every frame written and advances the high
	// watermark; it returns the offset of recs[0]. A failed commit leaves
	// nothing above the high watermark, so a retry lands at the same offsets.
	// Errors: domain.ErrLogPoisoned, domain.ErrRecordTooLarge,
	// domain.ErrInvalidRecord, domain.ErrClosed, or an I/O error.
	CommitDurable(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) (first int64, err error)
}

// PartitionReader reads committed records. Safe for concurrent use.
type PartitionReader interface {
	// Read returns up to maxRecords records (and about maxBytes of payload, at
	// least one record) from offset from onwards, contiguous, never past the
	// high watermark. Errors: domain.ErrOffsetNegative,
	// domain.ErrOffsetNotWritten (from >= high watermark), domain.ErrOffsetGone
	// (reaped or gap), domain.ErrRecordCorrupt, domain.ErrLogClosed.
	// Returned slices are the caller's; it must not modify them.
	Read(ctx context.Context, ref domain.PartitionRef, from int64, maxRecords, maxBytes int) ([]domain.Record, error)
	// Bounds reports the partition's readable range without stamping use.
	Bounds(ref domain.PartitionRef) (LogBounds, error)
	// Changed returns a channel closed at the next high-watermark advance or
	// close of the partition's log.
	Changed(ref domain.PartitionRef) (<-chan struct{}, error)
	// OnChange registers fn, called with a topic's name after every change
	// of one of its partitions that would close a Changed channel (a
	// high-watermark advance first among them), once the change is visible
	// to Read and Bounds. fn runs on the goroutine making the change,
	// possibly under the log's locks: it must be quick, must not block and
	// must not call back into the logs. The returned function unregisters it.
	OnChange(fn func(topic string)) (stop func())
}

// PartitionLogs owns every partition log on this node.
type PartitionLogs interface {
	PartitionWriter
	PartitionReader
	// LogStats is a peek: it never stamps use, and it answers a closed log
	// from its directory and hwm file without opening it, so a describe
	// keeps no log open. A partition never opened reports the zero
	// LogStats, as does a ref whose directory belongs to another incarnation.
	// Errors: domain.ErrLogClosed (a retired incarnation),
	// domain.ErrClosed, domain.ErrInvalidRecord (bad ref), or an I/O error.
	LogStats(ref domain.PartitionRef) (LogStats, error)
	// SetRetention bounds the age of the topic's records; 0 keeps them forever.
	SetRetention(topic string, id domain.TopicID, retention time.Duration)
	// Remove deletes the partition's data. Destructive: callers confirm with
	// the Raft leader first.
	Remove(ref domain.PartitionRef) error
	// Close closes every open log, writing each exact high watermark.
	Close() error
}

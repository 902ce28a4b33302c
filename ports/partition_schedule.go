package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// ScheduledPartition is one local partition holding scheduled records.
type ScheduledPartition struct {
	Ref domain.PartitionRef
	// NextMs is when the partition next needs a release (unix ms): its
	// earliest pending deliver-at, or the start or end of a bucket.
	NextMs int64
	// Count is the records scheduled and not yet released.
	Count int64
}

// PartitionSchedule keeps the scheduled records of local partitions (a
// per-message delay) beside their logs, on disk, until they are due, and
// moves them with the partition. Safe for concurrent use.
type PartitionSchedule interface {
	// Schedule makes recs durable in ref's schedule (each with a
	// DeliverAtMs; Offset and CommittedAtMs ignored). Like CommitDurable it
	// is refused while a move's freeze holds, with nothing kept; a failed
	// call keeps nothing the caller was told about, so it retries the same
	// records.
	Schedule(ctx context.Context, ref domain.PartitionRef, recs []domain.Record) error
	// Release commits to ref's log, in one durable commit, up to maxRecords
	// scheduled records whose deliver-at is at or before nowMs (earliest
	// first) and then forgets them; it answers how many and their
	// deliver-ats' earliest (for the due lag). A crash between the commit
	// and the forgetting releases them again (at least once); nothing is
	// released early. Refused like CommitDurable while frozen.
	Release(ctx context.Context, ref domain.PartitionRef, nowMs int64, maxRecords int) (Released, error)
	// Scheduled lists the local partitions holding scheduled records. The
	// first call scans the data directory.
	Scheduled() ([]ScheduledPartition, error)
	// ScheduleChanged returns a channel closed when a partition's next
	// release moves earlier, or one is installed by a move.
	ScheduleChanged() <-chan struct{}
}

// Released is what one Release moved to the log.
type Released struct {
	Count int
	Bytes int // payload bytes released
	// LagMs is, for each record released, how late it is: the release
	// time less its deliver-at (never negative).
	LagMs []int64
}

package segmentlog

import "time"

// Observer receives the store's storage measurements (api.md §7 narad_storage_*
// and narad_errors_total{component="storage"}). Calls come from the commit
// path, the flusher, close and the reaper, several of them under a log's
// write lock: an implementation must be safe for concurrent use, cheap, and
// must never block or call back into the Store. Options.Observer nil
// observes nothing.
type Observer interface {
	// Flushed reports one drain of buffered records into the active segment:
	// the frame bytes written and the time spent encoding and writing them.
	Flushed(topic string, partition int32, bytes int64, took time.Duration)
	// Fsynced reports one fsync of the active segment on the commit path,
	// failed or not.
	Fsynced(topic string, partition int32, took time.Duration)
	// HighWatermarkPersisted reports one write of the hwm file: its release
	// at the first advance after an open or the exact boundary at close. err
	// is the write's outcome.
	HighWatermarkPersisted(topic string, partition int32, took time.Duration, err error)
	// RetentionDeleted reports what one sweep of a partition deleted by age:
	// segment bytes and records unlinked.
	RetentionDeleted(topic string, partition int32, bytes, messages int64)
	// RetentionRun reports one partition's sweep by the reaper.
	RetentionRun(topic string, partition int32, took time.Duration)
	// StorageError reports a handled storage fault: ErrorKindFsyncPoisoned
	// or ErrorKindRetentionUnlink.
	StorageError(kind string)
	// Closed reports that the partition's log closed (idle eviction, a
	// reclaim, a delete or shutdown): its per-partition series may go, so
	// partitions that sit idle cost no memory or scrape time for them. A
	// reopen reports afresh.
	Closed(topic string, partition int32)
}

// The kinds StorageError reports (narad_errors_total's kind label).
const (
	ErrorKindFsyncPoisoned   = "fsync_poisoned"   // a log poisoned by a failed fsync or truncate
	ErrorKindRetentionUnlink = "retention_unlink" // retention could not unlink an expired segment
)

// nopObserver stands in for a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) Flushed(string, int32, int64, time.Duration)                {}
func (nopObserver) Fsynced(string, int32, time.Duration)                       {}
func (nopObserver) HighWatermarkPersisted(string, int32, time.Duration, error) {}
func (nopObserver) RetentionDeleted(string, int32, int64, int64)               {}
func (nopObserver) RetentionRun(string, int32, time.Duration)                  {}
func (nopObserver) StorageError(string)                                        {}
func (nopObserver) Closed(string, int32)                                       {}

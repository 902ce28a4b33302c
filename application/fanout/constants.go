package fanout

import "time"

// Reconcile (internals.md §6.1, §6.5, §6.7).
const (
	// reconcileInterval is the reconciler's tick.
	reconcileInterval = 1 * time.Second
	// skipLogEveryCount: a skipped pass (replica not caught up) is logged the
	// first time and every this many times.
	skipLogEveryCount = 30
	// orphanSweepEveryTicks: the orphan cursor-file sweep runs on the first
	// caught-up tick and every this many caught-up ticks.
	orphanSweepEveryTicks = 30
	// fullPassMaxInterval: a tick whose views have not moved skips the full
	// comparison, but never for longer than this.
	fullPassMaxInterval = 30 * time.Second
	// orphanSweepMaxInterval: an orphan-sweep tick with nothing moved since
	// the last clean sweep skips it, but never for longer than this (a
	// cursor file can also be orphaned by a crash between its cursor's stop
	// and its removal).
	orphanSweepMaxInterval = 10 * time.Minute
)

// Cursor loop (§6.2, §6.4, §6.7).
const (
	// slabLongPollInterval bounds a slab read's wait for new records.
	slabLongPollInterval = 1 * time.Second
	// retryBackoffInterval separates attempts after a failed commit or
	// cursor write.
	retryBackoffInterval = 1 * time.Second
	// batchMaxRecordsDefault, batchMaxBytesDefault and lingerDefault size a
	// slab (fanout.max_batch_records, fanout.max_batch_bytes,
	// fanout.linger_ms).
	batchMaxRecordsDefault = 4096
	batchMaxBytesDefault   = 4 << 20
	lingerDefault          = 25 * time.Millisecond
	// childCommitsInFlightMaxCount bounds the child partitions one slab
	// commits to at once.
	childCommitsInFlightMaxCount = 16
	// peerCommitTimeout bounds one CommitProduceBatch to another node.
	peerCommitTimeout = 30 * time.Second
	// delaySleepMaxInterval caps a delay child's sleep until its next record
	// is due (metadata freshness).
	delaySleepMaxInterval = 30 * time.Second
	// retryLogEveryCount: a failing child commit is logged as a warning on
	// its first attempt and every this many attempts after.
	retryLogEveryCount = 30
	// cleanupTimeout bounds the confirmation and removal of a stopped
	// cursor's file.
	cleanupTimeout = 10 * time.Second
)

package domain

import "errors"

// Storage and ingress outcomes. Adapters wrap these with %w and context; the
// HTTP adapter alone maps them to status codes.
var (
	// ErrInvalidRecord: a record that can never be stored (empty topic or
	// payload, partition out of range, bad topic id).
	ErrInvalidRecord = errors.New("domain: invalid record")
	// ErrRecordTooLarge: a record or batch above a format's size cap.
	ErrRecordTooLarge = errors.New("domain: record too large")

	// ErrOffsetNegative: a read below offset zero (the API answers 400).
	ErrOffsetNegative = errors.New("domain: negative offset")
	// ErrOffsetNotWritten: a read at or past the high watermark (204).
	ErrOffsetNotWritten = errors.New("domain: offset at or past the high watermark")
	// ErrOffsetGone: a read below the oldest retained record or in a gap (410).
	ErrOffsetGone = errors.New("domain: offset reaped or in a gap")
	// ErrRecordCorrupt: the frame holding the offset failed its checksum (410).
	ErrRecordCorrupt = errors.New("domain: record corrupt")

	// ErrLogClosed: the partition log was closed under the reader. Transient:
	// never to be read as a gap or as corruption.
	ErrLogClosed = errors.New("domain: partition log closed")
	// ErrLogPoisoned: an fsync of the partition log failed; appends and commits
	// fail until the log is reopened. Reads keep working.
	ErrLogPoisoned = errors.New("domain: partition log poisoned by a failed fsync")

	// ErrWALFailed: a write or fsync of the ingress WAL failed; the WAL stays
	// latched until the process restarts.
	ErrWALFailed = errors.New("domain: ingress WAL failed")
	// ErrClosed: the component was closed.
	ErrClosed = errors.New("domain: closed")
)

// Client input the domain rules refuse.
var (
	// ErrInvalidTopicName: a name outside the topic name rules (400).
	ErrInvalidTopicName = errors.New("domain: invalid topic name")
	// ErrInvalidReceiptHandle: a receipt handle that does not parse (400).
	ErrInvalidReceiptHandle = errors.New("domain: invalid receipt handle")
)

// Consume outcomes.
var (
	// ErrLeaseGone: the receipt handle matches no live lease (lapsed, settled,
	// or never this topic's) (410).
	ErrLeaseGone = errors.New("domain: receipt handle no longer matches an active reservation")
)

package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// WALEntry is one durable ingress record with its sequence number.
type WALEntry struct {
	Seq    uint64
	Record domain.IngressRecord
}

// IngressAppender accepts produced records. Safe for concurrent use:
// concurrent appenders share one write and one fsync (group commit).
type IngressAppender interface {
	// Append stages rec and returns its sequence once rec is durable on disk.
	// ctx is honoured only before rec is staged; a staged record always waits
	// for the real outcome. Errors: domain.ErrInvalidRecord,
	// domain.ErrRecordTooLarge, domain.ErrWALFailed (latched), domain.ErrClosed.
	// The WAL copies rec; the caller keeps its slices.
	Append(ctx context.Context, rec domain.IngressRecord) (seq uint64, err error)
	// AppendMany stages recs with consecutive sequences, nothing interleaved,
	// and returns the first sequence once all are durable. A crash keeps a
	// prefix of the batch, never a gap. An error means the batch is not acked.
	AppendMany(ctx context.Context, recs []domain.IngressRecord) (first uint64, err error)
}

// IngressReader reads durable records back for dispatch.
type IngressReader interface {
	// ReadFrom returns up to max durable entries with Seq >= from, in sequence
	// order, dense. It returns no entry past DurableNext. The returned slices
	// belong to the caller.
	ReadFrom(from uint64, max int) ([]WALEntry, error)
	// DurableNext is the first sequence not yet durable.
	DurableNext() uint64
	// Durable returns a channel closed the next time DurableNext moves (or the
	// WAL closes). Fetch it before the last check to never miss a wake-up.
	Durable() <-chan struct{}
}

// IngressCheckpointer records how far dispatch has committed and reclaims
// what lies below.
type IngressCheckpointer interface {
	// Checkpoint is the first sequence not yet committed to a partition owner,
	// as last stored (0 when never stored).
	Checkpoint() uint64
	// StoreCheckpoint records seq as the first uncommitted sequence. The value
	// survives a process crash at once and a machine crash within the flush
	// interval; compaction uses only the durably flushed value. seq must not
	// exceed DurableNext nor go backwards.
	StoreCheckpoint(seq uint64) error
}

// IngressWAL is the node's ingress write-ahead log: every 202 stands on it.
type IngressWAL interface {
	IngressAppender
	IngressReader
	IngressCheckpointer
	// Close flushes the checkpoint and releases files. Appends after Close
	// fail with domain.ErrClosed.
	Close() error
}

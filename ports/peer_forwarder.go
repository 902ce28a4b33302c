package ports

import (
	"context"
	"time"

	"github.com/narad/narad/domain"
)

// ConsumeMode is how a forwarded consume reads (api.md §2.14).
type ConsumeMode uint8

const (
	// ConsumeQueue leases one message from any of the owner's partitions.
	ConsumeQueue ConsumeMode = iota
	// ConsumePinned leases one message from RemoteConsume.Partition.
	ConsumePinned
	// ConsumeBatch leases up to RemoteConsume.Max messages.
	ConsumeBatch
	// ConsumeReplay reads (Partition, Offset) without a lease.
	ConsumeReplay
)

// RemoteConsume is the one request shape of a consume carried to a
// partition's owner (story F11: the node RPC encodes every field; a
// field-parity test keeps it so).
type RemoteConsume struct {
	Topic     string
	Mode      ConsumeMode
	Partition int32 // ConsumePinned, ConsumeReplay; ConsumeBatch when Pinned
	Pinned    bool  // ConsumeBatch only: read Partition alone
	Offset    int64 // ConsumeReplay
	Max       int32 // ConsumeBatch: 1..100
	// Wait is the owner's long-poll budget; 0 answers at once. The call's
	// own budget is Wait plus a grace (internals.md §5.11).
	Wait time.Duration
	// LocalOnly marks a probe (internals.md §5.5): the owner scans only
	// its own partitions and never forwards further. The call's budget is
	// the probe budget (500 ms).
	LocalOnly bool
	// Claim marks a claim after a delivery-token notification: the owner
	// retires its hold on arrival (internals.md §5.5).
	Claim bool
	// Identity is the authenticated user the request acts for, so the
	// owner counts it against that user's consume cap; empty with security
	// off (the owner then counts every forwarded consume in one bucket).
	// The owner trusts it because the stream proved the cluster secret.
	Identity string
}

// SettleOp is what a forwarded settle does to each lease (api.md §2.15).
type SettleOp uint8

const (
	SettleAck SettleOp = iota
	SettleExtend
	SettleNack
)

// NackOptions is what a forwarded nack carries besides its handles: a
// delay (0: none) and a reason ("": none), as consume.NackOptions.
type NackOptions struct {
	Delay  time.Duration
	Reason string
}

// PeerForwarder carries consumes and settles to the partition's owner (the
// node RPC of the cluster issue, internals.md §5.5, §5.6, §5.9). Safe for
// concurrent use.
//
// Every error falls in one of three classes:
//   - wraps domain.ErrNotSent: the request never left this node (no
//     address, dial failure or backoff, no connection, stream or slot);
//     the owner surely did not act. An API answers an ack 503.
//   - wraps domain.ErrNoAnswer: the request was sent and no usable answer
//     came back; the owner may or may not have acted. An API answers 502.
//   - anything else is the owner's refusal: its domain error
//     (domain.ErrTopicNotFound, domain.ErrNotOwner, domain.ErrLeaseGone,
//     domain.ErrPartitionOutOfRange, domain.ErrTooManyConsumes,
//     domain.ErrOffsetNotWritten, domain.ErrUnavailable, ...; a
//     *domain.Refusal when the owner's carried a client message).
//
// The caller's own cancellation or deadline comes back wrapped in the
// first or second class (errors.Is(err, ctx.Err()) holds).
type PeerForwarder interface {
	// ConsumeRemote runs req on node and returns its deliveries (none when
	// nothing became available within req.Wait). The slice and the
	// records' bytes belong to the caller.
	ConsumeRemote(ctx context.Context, node string, req RemoteConsume) ([]domain.Delivery, error)
	// SettleRemote applies op to every handle on node, each independently
	// and in order, and answers one error (nil for success) per handle.
	// The whole call fails only when no handle could be answered: the
	// topic is absent on node (domain.ErrTopicNotFound), or a transport
	// failure (domain.ErrNotSent: none was applied; domain.ErrNoAnswer:
	// no handle's outcome is known).
	SettleRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op SettleOp) ([]error, error)
	// NackRemote nacks every handle on node with opts (the owner keeps
	// each message out of delivery for opts.Delay and keeps opts.Reason as
	// its last nack reason), answered as SettleRemote. An owner on a
	// release that cannot delay a nack answers every handle a
	// domain.ErrPrecondition refusal; none was applied.
	NackRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, opts NackOptions) ([]error, error)
}

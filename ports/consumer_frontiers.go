package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// ConsumerFrontiers reads where the consumers of partitions stand, on the
// node owning them: the start of a remote child attached `from: unconsumed`
// (api.md §2.10.2, internals.md §7.1). Safe for concurrent use.
type ConsumerFrontiers interface {
	// Unconsumed returns, for each partition in parts of topic's
	// incarnation id (an empty id means the live one), the first offset
	// consumers have not settled: their committed ack frontier + 1, 0 when
	// none was ever settled. Entries are in parts order. An offset acked
	// above the frontier (acked ahead) does not move it. It never forwards
	// and refuses the whole request, answering nothing, on any error:
	// domain.ErrTopicNotFound (no such incarnation here),
	// domain.ErrPartitionOutOfRange, domain.ErrNotOwner (a partition not
	// owned here), domain.ErrUnavailable (the metadata replica or the
	// persisted progress cannot be read), domain.ErrClosed, ctx.Err().
	Unconsumed(ctx context.Context, topic string, id domain.TopicID, parts []int32) ([]int64, error)
}

// PeerFrontiers asks another node for ConsumerFrontiers.Unconsumed of
// partitions it owns (node RPC op 38, ConsumerFrontiers: internals.md
// §10.3). Safe for concurrent use.
type PeerFrontiers interface {
	// Unconsumed returns node's answer, in parts order. The owner's
	// refusals come back as their domain sentinels (as
	// ConsumerFrontiers.Unconsumed); anything else is a transport error.
	Unconsumed(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]int64, error)
}

package ports

import (
	"context"

	"github.com/narad/narad/domain"
)

// PeerStats asks another node for the statistics of partition logs it owns
// (node RPC op 8, TopicPartitionStats: internals.md §6.3 attach point, §6.6
// describe). Safe for concurrent use.
type PeerStats interface {
	// PartitionStats returns node's LogStats for each partition in parts,
	// in the same order, for the incarnation id of topic (an empty id
	// means the live one). Like PartitionLogs.LogStats it is a peek: it
	// never opens or stamps a log. Errors: domain.ErrTopicNotFound (node
	// has no such incarnation), domain.ErrPartitionOutOfRange,
	// domain.ErrUnavailable, ctx.Err(), or a transport error.
	PartitionStats(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]LogStats, error)
}

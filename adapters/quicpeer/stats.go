package quicpeer

import (
	"context"
	"fmt"

	"github.com/narad/narad/application/partitionstats"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerStats = (*Peers)(nil)

// StatsReader answers statistics requests on the owner:
// *partitionstats.Reader satisfies it.
type StatsReader interface {
	PartitionStats(ctx context.Context, topic string, id domain.TopicID, parts []int32) ([]ports.LogStats, error)
}

var _ StatsReader = (*partitionstats.Reader)(nil)

// PartitionStats asks node for the LogStats of parts of topic's incarnation
// id (op 8) and returns them in the order of parts. The call has the
// caller's deadline (the 5 s reply default without one). Owner refusals
// come back as their domain sentinels (domain.ErrTopicNotFound,
// domain.ErrNotOwner, domain.ErrPartitionOutOfRange, domain.ErrUnavailable,
// ...); anything else is a transport error (ports.PeerStats).
func (p *Peers) PartitionStats(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]ports.LogStats, error) {
	if len(parts) > statsPartitionsMaxCount {
		return nil, fmt.Errorf("quicpeer: stats of %d partitions from %s (cap %d): %w", len(parts), node, statsPartitionsMaxCount, domain.ErrInvalidArgument)
	}
	payload := appendPartsRequest(make([]byte, 0, partsRequestSize(topic, id, parts)), topic, id, parts)
	return callList(ctx, p, node, OpTopicPartitionStats, payload, "partition stats", len(parts), decodeStatsReplyBody)
}

// RegisterPartitionStats serves TopicPartitionStats (op 8) with r. It
// panics on a nil r.
func RegisterPartitionStats(srv *Server, r StatsReader) {
	if r == nil {
		panic("quicpeer: nil stats reader")
	}
	srv.Handle(OpTopicPartitionStats, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodePartsRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		stats, err := r.PartitionStats(ctx, req.topic, req.id, req.parts)
		if err == nil && len(stats) != len(req.parts) {
			err = fmt.Errorf("quicpeer: stats reader answered %d entries for %d partitions", len(stats), len(req.parts))
		}
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendStatsReplyBody(make([]byte, 0, 4+statsEntryWireBytes*len(stats)), stats)), nil
	})
}

package quicpeer

import (
	"context"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerFrontiers = (*Peers)(nil)

// Unconsumed asks node for the first unsettled offset of each of parts of
// topic's incarnation id (op 38, ConsumerFrontiers) and returns them in the
// order of parts. The call has the caller's deadline (the 5 s reply default
// without one). Owner refusals come back as their domain sentinels
// (domain.ErrTopicNotFound, domain.ErrNotOwner,
// domain.ErrPartitionOutOfRange, domain.ErrUnavailable, domain.ErrClosed,
// ...); an owner of an older release answers ErrUnsupportedOp; anything
// else is a transport error (ports.PeerFrontiers).
func (p *Peers) Unconsumed(ctx context.Context, node, topic string, id domain.TopicID, parts []int32) ([]int64, error) {
	if len(parts) > frontiersPartitionsMaxCount {
		return nil, fmt.Errorf("quicpeer: consumer frontiers of %d partitions from %s (cap %d): %w",
			len(parts), node, frontiersPartitionsMaxCount, domain.ErrInvalidArgument)
	}
	payload := appendPartsRequest(make([]byte, 0, partsRequestSize(topic, id, parts)), topic, id, parts)
	return callList(ctx, p, node, OpConsumerFrontiers, payload, "consumer frontiers", len(parts), decodeFrontiersReplyBody)
}

// RegisterConsumerFrontiers serves ConsumerFrontiers (op 38) with r, the
// owner's own partitions only (*consume.Service satisfies it). It panics on
// a nil r.
func RegisterConsumerFrontiers(srv *Server, r ports.ConsumerFrontiers) {
	if r == nil {
		panic("quicpeer: nil consumer frontiers")
	}
	srv.Handle(OpConsumerFrontiers, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodePartsRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		offsets, err := r.Unconsumed(ctx, req.topic, req.id, req.parts)
		if err == nil {
			err = checkFrontiers(offsets, len(req.parts))
		}
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendFrontiersReplyBody(make([]byte, 0, frontiersReplyBodySize(offsets)), offsets)), nil
	})
}

// checkFrontiers refuses an owner's answer the reply cannot carry: another
// count than asked, or a negative offset (it would fail the caller's
// decoder as an unreadable reply).
func checkFrontiers(offsets []int64, want int) error {
	if len(offsets) != want {
		return fmt.Errorf("quicpeer: consumer frontiers answered %d entries for %d partitions", len(offsets), want)
	}
	for i, o := range offsets {
		if o < 0 {
			return fmt.Errorf("quicpeer: consumer frontiers answered offset %d for entry %d", o, i)
		}
	}
	return nil
}

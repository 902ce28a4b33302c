package quicpeer

import (
	"context"
	"fmt"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerFanoutLag = (*Peers)(nil)

// FanoutLagReader answers FanoutCursors requests on the owner of the
// parent partitions: *fanout.LagReader satisfies it.
type FanoutLagReader interface {
	FanoutLag(ctx context.Context, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error)
}

var _ FanoutLagReader = (*fanout.LagReader)(nil)

// FanoutLag asks node where the fan-out cursors of children stand on parts
// of parent's incarnation parentID (op 17) and returns one entry per
// (partition, child) pair in ports.PeerFanoutLag's order. The call has the
// caller's deadline (the 5 s reply default without one). More pairs than
// one call carries are refused before sending (domain.ErrInvalidArgument);
// owner refusals come back as their domain sentinels
// (domain.ErrTopicNotFound, domain.ErrUnavailable, ...); anything else is
// a transport error.
func (p *Peers) FanoutLag(ctx context.Context, node, parent string, parentID domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error) {
	if len(parts) > fanoutPartitionsMaxCount || len(children) > fanoutChildrenMaxCount || len(parts)*len(children) > fanoutPairsMaxCount {
		return nil, fmt.Errorf("quicpeer: fanout cursors of %d partitions × %d children from %s (caps %d, %d, %d pairs): %w",
			len(parts), len(children), node, fanoutPartitionsMaxCount, fanoutChildrenMaxCount, fanoutPairsMaxCount, domain.ErrInvalidArgument)
	}
	req := fanoutLagRequest{parent: parent, parentID: parentID, parts: parts, children: children}
	body, err := p.call(ctx, node, OpFanoutCursors, appendFanoutLagRequest(make([]byte, 0, fanoutLagRequestSize(req)), req))
	if err != nil {
		return nil, err
	}
	lags, err := decodeFanoutLagReplyBody(body)
	if err == nil && len(lags) != len(parts)*len(children) {
		err = fmt.Errorf("%d entries for %d partitions × %d children: %w", len(lags), len(parts), len(children), ErrBadPayload)
	}
	if err != nil {
		return nil, unreadableReply("fanout cursors", node, err)
	}
	return lags, nil
}

// RegisterFanoutCursors serves FanoutCursors (op 17) with r. It panics on
// a nil r.
func RegisterFanoutCursors(srv *Server, r FanoutLagReader) {
	if r == nil {
		panic("quicpeer: nil fanout lag reader")
	}
	srv.Handle(OpFanoutCursors, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeFanoutLagRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		lags, err := r.FanoutLag(ctx, req.parent, req.parentID, req.parts, req.children)
		if err == nil && len(lags) != len(req.parts)*len(req.children) {
			err = fmt.Errorf("quicpeer: fanout lag reader answered %d entries for %d pairs", len(lags), len(req.parts)*len(req.children))
		}
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendFanoutLagReplyBody(make([]byte, 0, 4+fanoutLagEntryWireBytes*len(lags)), lags)), nil
	})
}

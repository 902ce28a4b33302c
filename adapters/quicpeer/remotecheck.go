package quicpeer

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.PeerRemoteLinks = (*Peers)(nil)

// remoteCheckRequest is RemoteCheck's request (op 36): the mode and the
// parent whose remote child cursors are asked for. "links" is the one mode
// this build serves.
type remoteCheckRequest struct {
	Mode   string `json:"mode"`
	Parent string `json:"parent"`
}

// remoteCursorBody is one cursor of a "links" reply.
type remoteCursorBody struct {
	Partition   int32  `json:"partition"`
	Child       string `json:"child"`
	State       string `json:"state"`
	BlockedAt   int64  `json:"blocked_at"`
	LastOKMs    int64  `json:"last_ok_ms"`
	LastCheckMs int64  `json:"last_check_ms"`
	Lag         int64  `json:"lag"`
}

type remoteLinksReply struct {
	Cursors []remoteCursorBody `json:"cursors"`
}

// remoteCheckModeLinks asks for a parent's remote child cursors.
const remoteCheckModeLinks = "links"

// remoteCursorsMax bounds a reply: 16 remote children of a parent of at
// most 65,536 partitions would be more than any node runs; this is a sanity
// bound against a corrupt reply.
const remoteCursorsMax = 1 << 20

// RemoteLinks asks node for the remote child cursors of parent it runs
// (op 36, mode links).
func (p *Peers) RemoteLinks(ctx context.Context, node, parent string) ([]ports.RemoteCursorReport, error) {
	req, _ := json.Marshal(remoteCheckRequest{Mode: remoteCheckModeLinks, Parent: parent})
	body, err := p.call(ctx, node, OpRemoteCheck, req)
	if err != nil {
		return nil, err
	}
	out, err := decodeRemoteLinks(body)
	if err != nil {
		return nil, unreadableReply("remote links", node, err)
	}
	return out, nil
}

func decodeRemoteLinks(body []byte) ([]ports.RemoteCursorReport, error) {
	var r remoteLinksReply
	if err := strictJSON(body, &r); err != nil {
		return nil, err
	}
	if len(r.Cursors) > remoteCursorsMax {
		return nil, fmt.Errorf("remote links reply of %d cursors: %w", len(r.Cursors), ErrBadPayload)
	}
	out := make([]ports.RemoteCursorReport, len(r.Cursors))
	for i, c := range r.Cursors {
		if c.Partition < 0 || c.Child == "" || c.State == "" || c.BlockedAt < -1 || c.Lag < -1 {
			return nil, fmt.Errorf("remote cursor %+v out of range: %w", c, ErrBadPayload)
		}
		out[i] = ports.RemoteCursorReport{Partition: c.Partition, Child: c.Child, State: c.State, BlockedAt: c.BlockedAt,
			LastOKMs: c.LastOKMs, LastCheckMs: c.LastCheckMs, Lag: c.Lag}
	}
	return out, nil
}

func decodeRemoteCheckRequest(p []byte) (remoteCheckRequest, error) {
	var req remoteCheckRequest
	if err := strictJSON(p, &req); err != nil {
		return req, err
	}
	if req.Mode != remoteCheckModeLinks {
		return req, fmt.Errorf("remote check mode %q: %w", req.Mode, domain.ErrInvalidArgument)
	}
	if err := domain.ValidateTopicName(req.Parent); err != nil {
		return req, fmt.Errorf("remote check parent: %w", ErrBadPayload)
	}
	return req, nil
}

// RegisterRemoteCheck serves RemoteCheck (op 36) with r. It panics on a
// nil r.
func RegisterRemoteCheck(srv *Server, r ports.RemoteLinks) {
	if r == nil {
		panic("quicpeer: nil remote links")
	}
	srv.Handle(OpRemoteCheck, func(_ context.Context, p []byte) ([]byte, error) {
		req, err := decodeRemoteCheckRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		reports := r.RemoteLinks(req.Parent)
		body := remoteLinksReply{Cursors: make([]remoteCursorBody, len(reports))}
		for i, c := range reports {
			body.Cursors[i] = remoteCursorBody{Partition: c.Partition, Child: c.Child, State: c.State, BlockedAt: c.BlockedAt,
				LastOKMs: c.LastOKMs, LastCheckMs: c.LastCheckMs, Lag: c.Lag}
		}
		b, _ := json.Marshal(body) // plain fields always marshal
		return okReply(b), nil
	})
}

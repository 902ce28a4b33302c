package quicpeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

var _ ports.PeerRemoteWriter = (*Peers)(nil)

// remoteWriteRequest is RemoteWrite's request (op 35, JSON): the
// sub-operation, who asked, the request id and the entry in its Raft
// encoding (meta.Encode).
type remoteWriteRequest struct {
	Op        string `json:"op"`
	Actor     string `json:"actor"`
	RequestID string `json:"request_id"`
	Entry     []byte `json:"entry"`
}

// remoteWriteReply is the leader's answer: the index the entry applied at
// and what apply decided.
type remoteWriteReply struct {
	Index  uint64 `json:"index"`
	Code   uint8  `json:"code"`
	Detail string `json:"detail"`
}

// Bounds of a RemoteWrite request's text fields (an actor is a username:
// at most 64 characters; the request id 16 hex).
const (
	remoteWriteOpMaxBytes        = 64
	remoteWriteActorMaxBytes     = 256
	remoteWriteRequestIDMaxBytes = 64
)

// RemoteWrite hands w to node, the metadata leader.
func (p *Peers) RemoteWrite(ctx context.Context, node string, w ports.RemoteWrite) (ports.MetaApplied, error) {
	entry, err := meta.Encode(w.Envelope)
	if err != nil {
		return ports.MetaApplied{}, fmt.Errorf("quicpeer: remote write: %w", err)
	}
	payload, _ := json.Marshal(remoteWriteRequest{Op: w.Op, Actor: w.Actor, RequestID: w.RequestID, Entry: entry}) // plain fields always marshal
	body, err := p.call(ctx, node, OpRemoteWrite, payload)
	if errors.Is(err, ErrUnsupportedOp) {
		return ports.MetaApplied{}, fmt.Errorf("%w: %w", domain.ErrOlderRelease, err)
	}
	if err != nil {
		return ports.MetaApplied{}, err
	}
	var r remoteWriteReply
	if err := strictJSON(body, &r); err != nil {
		return ports.MetaApplied{}, unreadableReply("remote write", node, err)
	}
	return ports.MetaApplied{Index: r.Index, Result: meta.Result{Code: meta.Code(r.Code), Detail: r.Detail}}, nil
}

// decodeRemoteWriteRequest reads a request: bounded text fields and an
// entry of a remote type (33–37).
func decodeRemoteWriteRequest(p []byte) (ports.RemoteWrite, error) {
	var req remoteWriteRequest
	if err := strictJSON(p, &req); err != nil {
		return ports.RemoteWrite{}, err
	}
	if req.Op == "" || len(req.Op) > remoteWriteOpMaxBytes || len(req.Actor) > remoteWriteActorMaxBytes ||
		len(req.RequestID) > remoteWriteRequestIDMaxBytes {
		return ports.RemoteWrite{}, fmt.Errorf("remote write fields: %w", ErrBadPayload)
	}
	env, err := meta.Decode(req.Entry)
	if err != nil {
		return ports.RemoteWrite{}, fmt.Errorf("remote write entry: %v: %w", err, ErrBadPayload)
	}
	if !meta.IsRemoteType(env.Event.Type()) {
		return ports.RemoteWrite{}, fmt.Errorf("remote write of %s: %w", env.Event.Type(), ErrBadPayload)
	}
	return ports.RemoteWrite{Op: req.Op, Actor: req.Actor, RequestID: req.RequestID, Envelope: env}, nil
}

// RegisterRemoteWrite serves RemoteWrite (op 35) with l. It panics on a
// nil l.
func RegisterRemoteWrite(srv *Server, l ports.RemoteWriteLeader) {
	if l == nil {
		panic("quicpeer: nil remote write leader")
	}
	srv.Handle(OpRemoteWrite, func(ctx context.Context, p []byte) ([]byte, error) {
		w, err := decodeRemoteWriteRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		applied, err := l.LeaderWrite(ctx, w)
		if err != nil {
			return errReply(err), nil
		}
		b, _ := json.Marshal(remoteWriteReply{Index: applied.Index, Code: uint8(applied.Result.Code), Detail: applied.Result.Detail})
		return okReply(b), nil
	})
}

package quicpeer

import (
	"context"
	"errors"
	"fmt"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

var _ ports.ClusterJoiner = (*JoinClient)(nil)

// JoinClient is the joiner's side of JoinCluster (op 21): it asks a node by
// its node-RPC address, since a joiner has no member table to resolve ids
// with. Safe for concurrent use.
type JoinClient struct {
	client *Client
}

// NewJoinClient returns a JoinClient over c; it panics on a nil c.
func NewJoinClient(c *Client) *JoinClient {
	if c == nil {
		panic("quicpeer: nil client")
	}
	return &JoinClient{client: c}
}

// Join asks the node at addr to admit req (ports.ClusterJoiner). Without a
// deadline on ctx the call gets the 5 s reply default. A failed secret
// proof, either way, also wraps domain.ErrClusterAuth: the use case tells
// a node that answers but cannot be understood from an unreachable one
// (the empty-volume probe, internals §9.2).
func (j *JoinClient) Join(ctx context.Context, addr string, req ports.JoinRequest) (ports.JoinAdmission, error) {
	raw, err := j.client.Call(ctx, addr, OpJoinCluster, appendJoinRequest(nil, req))
	if errors.Is(err, ErrAuth) {
		return ports.JoinAdmission{}, fmt.Errorf("%w: %w", domain.ErrClusterAuth, err)
	}
	if err != nil {
		return ports.JoinAdmission{}, err
	}
	rp, err := decodeReply(raw)
	if err != nil {
		return ports.JoinAdmission{}, unreadableReply("join", addr, err)
	}
	return decodeJoinAnswer(rp, addr)
}

// RegisterJoin serves JoinCluster (op 21) with a: the answerer decides
// (admit on the leader, name the leader elsewhere); this handler only
// carries its answer. It panics on a nil a.
func RegisterJoin(srv *Server, a ports.JoinAnswerer) {
	if a == nil {
		panic("quicpeer: nil join answerer")
	}
	srv.Handle(OpJoinCluster, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeJoinRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		return joinReply(a.AnswerJoin(ctx, req)), nil
	})
}

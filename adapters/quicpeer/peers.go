package quicpeer

import (
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Resolver maps a member id to its node-RPC address. Bootstrap backs it
// with the member table; it must be safe for concurrent use.
type Resolver interface {
	Addr(node string) (addr string, ok bool)
}

var (
	_ ports.PeerCommitter = (*Peers)(nil)
	_ ports.PeerForwarder = (*Peers)(nil)
)

// Peers is the caller's side of the node operations: it resolves a node id
// to an address, encodes the request, calls through the Client and turns
// the reply back into the owner's domain outcome. Transport failures,
// timeouts and unknown nodes stay transport errors (ErrUnreachable,
// ErrTimeout, ErrNoAddress, ...), never domain refusals, each wrapped in
// its port class: domain.ErrNotSent when the request never left this node,
// domain.ErrNoAnswer when it did and no usable answer came back (an
// unreadable reply, or a refusal code this node does not know). So the
// outcome of a commit they interrupt stays unknown and the dispatcher
// keeps its records. Safe for concurrent use.
type Peers struct {
	client  *Client
	resolve Resolver
	obs     Observer
	acks    *ackRouter   // forwarded acks, extends and nacks (§5.9)
	groups  *legacyPeers // owners that refused CommitProduceBatches (op 37)
	probes  *legacyPeers // owners that could not read a token on a probe
}

// NewPeers returns Peers over c and r; it panics on a nil dependency.
func NewPeers(c *Client, r Resolver, opts ...PeersOption) *Peers {
	switch {
	case c == nil:
		panic("quicpeer: nil client")
	case r == nil:
		panic("quicpeer: nil resolver")
	}
	p := &Peers{client: c, resolve: r, obs: noObserver{}, groups: newLegacyPeers(), probes: newLegacyPeers()}
	p.acks = newAckRouter(p.sendAcks)
	for _, o := range opts {
		o(p)
	}
	return p
}

// CommitBatch asks node to commit req (op 11) and returns the offset of its
// first record. Owner refusals come back as their domain sentinels
// (domain.ErrNotOwner, domain.ErrTopicNotFound, domain.ErrUnavailable,
// ...); anything else leaves the outcome unknown (ports.PeerCommitter).
func (p *Peers) CommitBatch(ctx context.Context, node string, req ports.CommitRequest) (int64, error) {
	if len(req.Records) > commitRecordsMaxCount {
		return 0, fmt.Errorf("quicpeer: commit of %d records to %s (cap %d): %w", len(req.Records), node, commitRecordsMaxCount, domain.ErrRecordTooLarge)
	}
	if scheduled(req) {
		return p.commitScheduled(ctx, node, req)
	}
	payload := appendCommitRequest(make([]byte, 0, commitRequestSize(req)), req)
	body, err := p.call(ctx, node, OpCommitProduceBatch, payload)
	if err != nil {
		return 0, err
	}
	return commitFirst(body, node)
}

// call resolves node, runs op and decodes the reply envelope: the success
// body, or the owner's refusal as its domain error. Every call is reported
// to the Observer once.
func (p *Peers) call(ctx context.Context, node string, op Op, payload []byte) ([]byte, error) {
	start := time.Now()
	rp, err := p.roundTrip(ctx, node, op, payload)
	p.obs.RPCDone(OpLabel(op), rpcOutcome(rp.status, err), time.Since(start))
	if err != nil {
		return nil, err
	}
	return rp.result(node, op)
}

// roundTrip resolves node, runs op and decodes the reply envelope.
func (p *Peers) roundTrip(ctx context.Context, node string, op Op, payload []byte) (reply, error) {
	addr, ok := p.resolve.Addr(node)
	if !ok || addr == "" {
		return reply{}, fmt.Errorf("quicpeer: call op %d on node %q: %w: %w", op, node, ErrNoAddress, domain.ErrNotSent)
	}
	raw, err := p.client.Call(ctx, addr, op, payload)
	if err != nil {
		return reply{}, err
	}
	return readReply(raw, node, op)
}

// callList runs op on node and decodes the success body with decode, which
// must answer want entries: one per entry asked. A body that does not
// decode, or answers another count, is domain.ErrNoAnswer naming what.
func callList[T any](ctx context.Context, p *Peers, node string, op Op, payload []byte, what string, want int, decode func([]byte) ([]T, error)) ([]T, error) {
	body, err := p.call(ctx, node, op, payload)
	if err != nil {
		return nil, err
	}
	list, err := decode(body)
	if err == nil && len(list) != want {
		err = fmt.Errorf("%d entries for %d asked: %w", len(list), want, ErrBadPayload)
	}
	if err != nil {
		return nil, unreadableReply(what, node, err)
	}
	return list, nil
}

// readReply decodes raw, the reply envelope of op from node. One this node
// cannot read is domain.ErrNoAnswer: node may have acted.
func readReply(raw []byte, node string, op Op) (reply, error) {
	rp, err := decodeReply(raw)
	if err != nil {
		return reply{}, unreadableReply(fmt.Sprintf("op %d", op), node, err)
	}
	return rp, nil
}

// unreadableReply wraps err, a reply from peer that this node cannot read,
// in domain.ErrNoAnswer: the request was sent and the peer may have acted.
func unreadableReply(what, peer string, err error) error {
	return fmt.Errorf("quicpeer: %s reply from %s: %w: %w", what, peer, err, domain.ErrNoAnswer)
}

package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ConsumeRemote runs req on node (op 2). A probe (req.LocalOnly) gets the
// 500 ms probe budget, a long poll its wait plus a 2 s grace, in both cases
// unless ctx ends sooner.
func (p *Peers) ConsumeRemote(ctx context.Context, node string, req ports.RemoteConsume) ([]domain.Delivery, error) {
	budget := req.Wait + forwardWaitGrace
	if req.LocalOnly {
		budget = probeTimeout
	}
	return p.consumeWith(ctx, node, req, consumeToken{}, budget)
}

// consumeWith sends req (and tok, when tok.ttl > 0) to node as one Consume
// call under budget and decodes the deliveries it answers.
func (p *Peers) consumeWith(ctx context.Context, node string, req ports.RemoteConsume, tok consumeToken, budget time.Duration) ([]domain.Delivery, error) {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	body, err := p.call(ctx, node, OpConsume, appendConsumeWith(nil, req, tok))
	if err != nil {
		return nil, err
	}
	ds, err := decodeDeliveries(body)
	if err != nil {
		return nil, unreadableReply("consume", node, err)
	}
	return ds, nil
}

// settleOps are the single ops of each settle mode.
var settleOps = [...]Op{ports.SettleAck: OpAck, ports.SettleExtend: OpExtendAck, ports.SettleNack: OpNack}

// SettleRemote applies op to hs on node through node's ack lane
// (internals.md §5.9, acklane.go) under the 2 s settle budget (unless ctx
// ends sooner), which covers the wait for a slot of the window too. Below
// the window one handle goes as its single op (3, 18 or 19) and more as
// AckBatch (op 32) calls of at most 64 handles; with the window full they
// queue and leave with other callers' records as slots free. A call that
// fails as a whole (a transport failure, the topic absent) answers that
// error for each of its handles; when every handle got such an error, the
// call returns one of them instead: the least certain (domain.ErrNoAnswer)
// when they differ.
func (p *Peers) SettleRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op ports.SettleOp) ([]error, error) {
	if op > ports.SettleNack {
		return nil, fmt.Errorf("quicpeer: settle mode %d: %w", op, domain.ErrInvalidArgument)
	}
	if len(hs) == 0 {
		return []error{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	recs := make([]*ackRecord, len(hs))
	for i, h := range hs {
		recs[i] = newAckRecord(ctx, topic, ackItem{op: op, handle: h})
	}
	p.acks.settle(ctx, node, recs)
	out := make([]error, len(recs))
	var whole error
	allWhole := true
	for i, rec := range recs {
		out[i] = rec.err
		switch {
		case rec.err == nil || !wholeCall(rec.err):
			allWhole = false
		case whole == nil || errors.Is(rec.err, domain.ErrNoAnswer):
			whole = rec.err
		}
	}
	if allWhole {
		return nil, whole
	}
	return out, nil
}

// sendAcks is the ack lane's sender: one item as its single op, more as
// one AckBatch.
func (p *Peers) sendAcks(ctx context.Context, node, topic string, items []ackItem) ([]error, error) {
	if len(items) == 1 {
		_, err := p.call(ctx, node, settleOps[items[0].op], appendSettleRequest(nil, topic, items[0].handle))
		return []error{err}, nil
	}
	return p.ackBatch(ctx, node, topic, items)
}

// ackBatch sends one AckBatch and returns its per-item outcomes.
func (p *Peers) ackBatch(ctx context.Context, node, topic string, items []ackItem) ([]error, error) {
	decode := func(body []byte) ([]error, error) { return decodeItemReplies(body, node, OpAckBatch) }
	return callList(ctx, p, node, OpAckBatch, appendAckBatch(nil, topic, items), "ack batch", len(items), decode)
}

// wholeCall reports whether a single settle's error is about the call
// rather than its handle: a transport failure or an absent topic.
func wholeCall(err error) bool {
	return errors.Is(err, domain.ErrTopicNotFound) || isTransport(err)
}

// isTransport reports whether err is a transport failure (either class)
// rather than the owner's refusal.
func isTransport(err error) bool {
	return errors.Is(err, domain.ErrNotSent) || errors.Is(err, domain.ErrNoAnswer)
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

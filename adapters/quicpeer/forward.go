package quicpeer

import (
	"context"
	"errors"
	"fmt"

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
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	body, err := p.call(ctx, node, OpConsume, appendConsumeRequest(nil, req))
	if err != nil {
		return nil, err
	}
	ds, err := decodeDeliveries(body)
	if err != nil {
		return nil, fmt.Errorf("quicpeer: consume reply from %s: %w: %w", node, err, domain.ErrNoAnswer)
	}
	return ds, nil
}

// settleOps are the single ops of each settle mode.
var settleOps = [...]Op{ports.SettleAck: OpAck, ports.SettleExtend: OpExtendAck, ports.SettleNack: OpNack}

// SettleRemote applies op to hs on node under the 2 s settle budget
// (unless ctx ends sooner): one handle as its single op (3, 18 or 19), more
// as AckBatch (op 32) calls of at most 64 handles, one after another. A
// batch that fails as a whole (a transport failure, the topic absent)
// answers that error for each of its handles; when every handle got such an
// error, the call returns one of them instead: the least certain
// (domain.ErrNoAnswer) when the batches failed differently.
func (p *Peers) SettleRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op ports.SettleOp) ([]error, error) {
	if op > ports.SettleNack {
		return nil, fmt.Errorf("quicpeer: settle mode %d: %w", op, domain.ErrInvalidArgument)
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if len(hs) == 1 {
		_, err := p.call(ctx, node, settleOps[op], appendSettleRequest(nil, topic, hs[0]))
		if err != nil && wholeCall(err) {
			return nil, err
		}
		return []error{err}, nil
	}
	out := make([]error, 0, len(hs))
	var whole error
	failed := 0
	for start := 0; start < len(hs); start += ackBatchSendMaxCount {
		chunk := hs[start:min(start+ackBatchSendMaxCount, len(hs))]
		errs, err := p.ackBatch(ctx, node, topic, chunk, op)
		if err != nil {
			if whole == nil || errors.Is(err, domain.ErrNoAnswer) {
				whole = err
			}
			failed += len(chunk)
			errs = repeat(err, len(chunk))
		}
		out = append(out, errs...)
	}
	if len(hs) > 0 && failed == len(hs) {
		return nil, whole
	}
	return out, nil
}

// ackBatch sends one AckBatch and returns its per-handle outcomes.
func (p *Peers) ackBatch(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, op ports.SettleOp) ([]error, error) {
	items := make([]ackItem, len(hs))
	for i, h := range hs {
		items[i] = ackItem{op: op, handle: h}
	}
	body, err := p.call(ctx, node, OpAckBatch, appendAckBatch(nil, topic, items))
	if err != nil {
		return nil, err
	}
	errs, err := decodeItemReplies(body, node, OpAckBatch)
	if err == nil && len(errs) != len(hs) {
		err = fmt.Errorf("%d outcomes for %d handles: %w", len(errs), len(hs), ErrBadPayload)
	}
	if err != nil {
		return nil, fmt.Errorf("quicpeer: ack batch reply from %s: %w: %w", node, err, domain.ErrNoAnswer)
	}
	return errs, nil
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

package consume

import (
	"context"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Owner is the Service as a partition owner serves its peers: every
// request is answered from this node's own partitions and never forwarded
// again (internals.md §5.5), so a partition that moved mid-request answers
// domain.ErrNotOwner instead of bouncing between nodes. Register it, not
// the Service, as the node RPC's consume and settle handler.
type Owner struct{ s *Service }

// Owner returns the peer-facing view of s.
func (s *Service) Owner() *Owner { return &Owner{s: s} }

// Consume serves req from local partitions only (req.LocalOnly forced).
// A request that carries a token (TokenTTL > 0) and finds nothing leaves
// it for its node; a refused token is the request's answer.
func (o *Owner) Consume(ctx context.Context, req Request) ([]domain.Delivery, error) {
	req.LocalOnly = true
	ds, err := o.s.Consume(ctx, req)
	if err != nil || len(ds) > 0 || req.TokenTTL <= 0 {
		return ds, err
	}
	if err := o.s.AcceptTokens(req.TokenFor, []ports.TokenRegistration{{Topic: req.Topic, TTL: req.TokenTTL}}); err != nil {
		return nil, err
	}
	return nil, nil
}

// Settle applies op to h on a local partition only.
func (o *Owner) Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op Op) error {
	return o.s.settleRouted(ctx, topic, h, op, NackOptions{}, false)
}

// AckBatch applies op to each handle on local partitions only.
func (o *Owner) AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op Op) ([]error, error) {
	return o.s.ackBatch(ctx, topic, hs, op, NackOptions{}, false)
}

// NackBatchWith nacks each handle with opts on local partitions only.
func (o *Owner) NackBatchWith(ctx context.Context, topic string, hs []domain.ReceiptHandle, opts NackOptions) ([]error, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	return o.s.ackBatch(ctx, topic, hs, OpNack, opts, false)
}

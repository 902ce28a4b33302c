package quicpeer

import (
	"context"
	"fmt"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Committer is the owner side of a commit (internals.md §3.8):
// *produce.Committer satisfies it.
type Committer interface {
	CommitBatch(ctx context.Context, req ports.CommitRequest) (int64, error)
}

// Consumer serves forwarded consumes on the owner: *consume.Service
// satisfies it.
type Consumer interface {
	Consume(ctx context.Context, req consume.Request) ([]domain.Delivery, error)
}

// Settler serves forwarded acks, extends and nacks on the owner:
// *consume.Service satisfies it.
type Settler interface {
	Settle(ctx context.Context, topic string, h domain.ReceiptHandle, op consume.Op) error
	AckBatch(ctx context.Context, topic string, hs []domain.ReceiptHandle, op consume.Op) ([]error, error)
}

var (
	_ Consumer = (*consume.Service)(nil)
	_ Settler  = (*consume.Service)(nil)
	_ Tokens   = (*consume.Service)(nil)
)

// forwardedIdentity is who forwarded consumes count as against the owner's
// per-identity consume cap: forwarded requests carry no identity (the
// ingress node already admitted the client, internals.md §10.2), so they
// share one bucket per owner.
const forwardedIdentity = "\x00node-rpc"

// RegisterCommit serves CommitProduceBatch (op 11) with c. The handler's
// context ends when the caller gives up, so a batch whose caller stopped
// waiting is not appended (§3.8, re-check 3). It panics on a nil c.
func RegisterCommit(srv *Server, c Committer) {
	if c == nil {
		panic("quicpeer: nil committer")
	}
	srv.Handle(OpCommitProduceBatch, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeCommitRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		first, err := c.CommitBatch(ctx, req)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(commitReplyBody(first)), nil
	})
}

// RegisterConsume serves Consume (op 2) with c. Every forwarded consume is
// served from the owner's own partitions (consume.Service never forwards).
// It panics on a nil c.
func RegisterConsume(srv *Server, c Consumer) {
	if c == nil {
		panic("quicpeer: nil consumer")
	}
	srv.Handle(OpConsume, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeConsumeRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		ds, err := c.Consume(ctx, consumeRequest(req))
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendDeliveries(nil, ds)), nil
	})
}

// consumeRequest is the shim from the wire's request to the use case's.
// LocalOnly and Claim travel on; the owner's view forces LocalOnly anyway.
func consumeRequest(r ports.RemoteConsume) consume.Request {
	modes := [...]consume.Mode{
		ports.ConsumeQueue: consume.ModeQueue, ports.ConsumePinned: consume.ModePinned,
		ports.ConsumeBatch: consume.ModeBatch, ports.ConsumeReplay: consume.ModeReplay,
	}
	return consume.Request{
		Topic: r.Topic, Mode: modes[r.Mode], Partition: r.Partition, Pinned: r.Pinned,
		Offset: r.Offset, Max: int(r.Max), Wait: r.Wait, Identity: forwardedIdentity,
		LocalOnly: r.LocalOnly, Claim: r.Claim,
	}
}

// settleModes maps the wire's settle modes to the use case's.
var settleModes = [...]consume.Op{ports.SettleAck: consume.OpAck, ports.SettleExtend: consume.OpExtend, ports.SettleNack: consume.OpNack}

// RegisterSettle serves Ack (3), ExtendAck (18), Nack (19) and AckBatch
// (32) with s. An AckBatch is applied in order, each run of one mode as one
// s.AckBatch call, each handle answered exactly as its single op would be.
// It panics on a nil s.
func RegisterSettle(srv *Server, s Settler) {
	if s == nil {
		panic("quicpeer: nil settler")
	}
	registerSingleSettles(srv, s)
	srv.Handle(OpAckBatch, func(ctx context.Context, p []byte) ([]byte, error) {
		topic, items, err := decodeAckBatch(p)
		if err != nil {
			return errReply(err), nil
		}
		errs, err := applyAckBatch(ctx, s, topic, items)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendItemReplies(nil, errs)), nil
	})
}

// registerSingleSettles serves Ack (3), ExtendAck (18) and Nack (19) with
// s: what a release before AckBatch serves.
func registerSingleSettles(srv *Server, s Settler) {
	for mode, op := range settleOps {
		srv.Handle(op, func(ctx context.Context, p []byte) ([]byte, error) {
			topic, h, err := decodeSettleRequest(p)
			if err == nil {
				err = s.Settle(ctx, topic, h, settleModes[mode])
			}
			if err != nil {
				return errReply(err), nil
			}
			return appendReply(nil, statusNoContent, "", "", nil), nil
		})
	}
}

// applyAckBatch applies items in order, one s.AckBatch per run of one mode.
// A run that fails as a whole answers its error for each of its handles.
func applyAckBatch(ctx context.Context, s Settler, topic string, items []ackItem) ([]error, error) {
	out := make([]error, 0, len(items))
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && items[end].op == items[start].op {
			end++
		}
		hs := make([]domain.ReceiptHandle, end-start)
		for i := range hs {
			hs[i] = items[start+i].handle
		}
		errs, err := s.AckBatch(ctx, topic, hs, settleModes[items[start].op])
		if err == nil && len(errs) != len(hs) {
			err = fmt.Errorf("quicpeer: settler answered %d outcomes for %d handles", len(errs), len(hs))
		}
		switch {
		case err != nil && start == 0 && end == len(items):
			return nil, err // one run: the whole batch failed as the single ops would
		case err != nil:
			errs = repeat(err, len(hs)) // earlier runs stay answered
		}
		out = append(out, errs...)
		start = end
	}
	return out, nil
}

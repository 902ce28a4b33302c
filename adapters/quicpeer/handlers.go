package quicpeer

import (
	"context"
	"fmt"
	"sync"

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
	NackBatchWith(ctx context.Context, topic string, hs []domain.ReceiptHandle, opts consume.NackOptions) ([]error, error)
}

var (
	_ Consumer = (*consume.Service)(nil)
	_ Settler  = (*consume.Owner)(nil)
	_ Tokens   = (*consume.Service)(nil)
)

// forwardedIdentity is who forwarded consumes without an identity (security
// off) count as against the owner's per-identity consume cap: they share one
// bucket per owner. A secured request carries its user, who counts as
// themself on the owner too.
const forwardedIdentity = "\x00node-rpc"

// RegisterCommit serves CommitProduceBatch (op 11) and
// CommitProduceBatches (op 37) with c. An op-37 request is decoded whole
// before anything is committed (a malformed one is refused with 400), then
// its batches are committed concurrently, each answered as op 11 would
// have answered it. The handler's context ends when the caller gives up,
// so a batch whose caller stopped waiting is not appended (§3.8, re-check
// 3). It panics on a nil c.
func RegisterCommit(srv *Server, c Committer) {
	if c == nil {
		panic("quicpeer: nil committer")
	}
	registerCommitBatch(srv, c)
	registerCommitScheduled(srv, c)
	srv.Handle(OpCommitProduceBatches, func(ctx context.Context, p []byte) ([]byte, error) {
		reqs, err := decodeCommitGroup(p)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendCommitGroupReply(nil, commitAll(ctx, srv, c, reqs))), nil
	})
}

// registerCommitBatch serves CommitProduceBatch (op 11) with c: what a
// release before CommitProduceBatches serves.
func registerCommitBatch(srv *Server, c Committer) {
	srv.Handle(OpCommitProduceBatch, func(ctx context.Context, p []byte) ([]byte, error) {
		req, err := decodeCommitRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		return commitReply(c.CommitBatch(ctx, req)), nil
	})
}

// commitAll commits every batch of reqs with c, concurrently under ctx, and
// answers each with the whole reply op 11 would have answered for it; a
// batch whose commit panicked answers 500 (srv logs the panic).
func commitAll(ctx context.Context, srv *Server, c Committer, reqs []ports.CommitRequest) [][]byte {
	items := make([][]byte, len(reqs))
	concurrently(len(reqs), func(i int) {
		commit := func(ctx context.Context, _ []byte) ([]byte, error) {
			return commitReply(c.CommitBatch(ctx, reqs[i])), nil
		}
		item, err := srv.run(ctx, commit, OpCommitProduceBatches, nil)
		if err != nil {
			item = errReply(fmt.Errorf("commit batch %d of %d: %w", i, len(reqs), err))
		}
		items[i] = item
	})
	return items
}

// concurrently runs f(i) for each i below n at once, f(0) on the calling
// goroutine, and returns when every f returned.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := 1; i < n; i++ {
		wg.Go(func() { f(i) })
	}
	if n > 0 {
		f(0)
	}
	wg.Wait()
}

// RegisterConsume serves Consume (op 2) with c. Every forwarded consume is
// served from the owner's own partitions (consume.Service never forwards).
// It panics on a nil c.
func RegisterConsume(srv *Server, c Consumer) {
	if c == nil {
		panic("quicpeer: nil consumer")
	}
	srv.Handle(OpConsume, func(ctx context.Context, p []byte) ([]byte, error) {
		req, tok, err := decodeConsumeRequest(p)
		if err != nil {
			return errReply(err), nil
		}
		r := consumeRequest(req)
		r.TokenFor, r.TokenTTL = tok.from, tok.ttl
		ds, err := c.Consume(ctx, r)
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
	identity := forwardedIdentity
	if r.Identity != "" {
		identity = r.Identity
	}
	return consume.Request{
		Topic: r.Topic, Mode: modes[r.Mode], Partition: r.Partition, Pinned: r.Pinned,
		Offset: r.Offset, Max: int(r.Max), Wait: r.Wait, Identity: identity,
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
	registerNackDelayed(srv, s)
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

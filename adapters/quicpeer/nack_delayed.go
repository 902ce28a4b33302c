package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/narad/narad/domain"
)

// NackDelayed (op 39) payload. Part of the wire format and must never
// change:
//
//	request  topic string | delay_ms i64 | items u32 |
//	         items × (partition i32 | offset i64 | nonce u64)
//	reply    as an AckBatch reply: one outcome per item, in order
const nackDelayedItemWireBytes = 4 + 8 + 8

// nackOlderOwnerMessage answers each handle of a delayed nack whose owner
// runs a release without op 39: nothing was applied, the lease stands.
const nackOlderOwnerMessage = "the partition owner runs an older release that cannot delay a nack; the lease stands: nack without delay_ms, or retry after the upgrade"

func appendNackDelayed(b []byte, topic string, delay time.Duration, hs []domain.ReceiptHandle) []byte {
	b = appendI64(appendString(b, topic), delay.Milliseconds())
	b = appendU32(b, uint32(len(hs)))
	for _, h := range hs {
		b = appendHandle(b, h)
	}
	return b
}

func decodeNackDelayed(p []byte) (string, time.Duration, []domain.ReceiptHandle, error) {
	r := reader{b: p}
	topic := r.string("topic", wireNameMaxBytes)
	delayMs := r.i64("delay_ms")
	if r.err == nil && (delayMs < 0 || delayMs > math.MaxInt64/int64(time.Millisecond)) {
		r.fail("delay_ms %d", delayMs)
	}
	n := r.count("item count", nackDelayedItemWireBytes, ackBatchItemsMaxCount)
	hs := make([]domain.ReceiptHandle, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		hs = append(hs, readHandle(&r))
	}
	if err := r.end("nack delayed"); err != nil {
		return "", 0, nil, fmt.Errorf("decode nack delayed: %w", err)
	}
	return topic, time.Duration(delayMs) * time.Millisecond, hs, nil
}

// DeferRemote nacks hs on node with delay in one NackDelayed call under
// the 2 s settle budget. It does not ride the ack lane's window: a delayed
// nack is rare and its handles already come grouped per owner. An owner
// without op 39 answers every handle a domain.ErrPrecondition refusal.
func (p *Peers) DeferRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, delay time.Duration) ([]error, error) {
	if len(hs) == 0 {
		return []error{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	decode := func(body []byte) ([]error, error) { return decodeItemReplies(body, node, OpNackDelayed) }
	errs, err := callList(ctx, p, node, OpNackDelayed, appendNackDelayed(nil, topic, delay, hs), "nack delayed", len(hs), decode)
	if errors.Is(err, ErrUnsupportedOp) {
		return repeat(domain.Refuse(domain.ErrPrecondition, nackOlderOwnerMessage), len(hs)), nil
	}
	return errs, err
}

// registerNackDelayed serves NackDelayed (op 39) with s.
func registerNackDelayed(srv *Server, s Settler) {
	srv.Handle(OpNackDelayed, func(ctx context.Context, p []byte) ([]byte, error) {
		topic, delay, hs, err := decodeNackDelayed(p)
		if err != nil {
			return errReply(err), nil
		}
		errs, err := s.NackBatchAfter(ctx, topic, hs, delay)
		if err == nil && len(errs) != len(hs) {
			err = fmt.Errorf("quicpeer: settler answered %d outcomes for %d handles", len(errs), len(hs))
		}
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendItemReplies(nil, errs)), nil
	})
}

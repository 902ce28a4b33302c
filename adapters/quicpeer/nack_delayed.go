package quicpeer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/ports"
)

// NackDelayed (op 39) payload. Part of the wire format and must never
// change:
//
//	request  topic string | delay_ms i64 | items u32 |
//	         items × (partition i32 | offset i64 | nonce u64) |
//	         [reason: uvarint length | UTF-8 bytes]
//	reply    as an AckBatch reply: one outcome per item, in order
//
// The reason is written only when the nack gives one (1 to
// deadletter.ReasonBytesMax bytes), so a nack without a reason is
// byte-identical to the first form of op 39, and an owner of that form
// refuses a reason as trailing bytes rather than dropping it.
const nackDelayedItemWireBytes = 4 + 8 + 8

// nackOlderOwnerMessage answers each handle of a delayed nack, or of a nack
// with a reason, whose owner runs a release without op 39: nothing was
// applied, the lease stands.
const nackOlderOwnerMessage = "the partition owner runs an older release that cannot delay a nack or keep its reason; the lease stands: nack without delay_ms and reason, or retry after the upgrade"

func appendNackDelayed(b []byte, topic string, opts ports.NackOptions, hs []domain.ReceiptHandle) []byte {
	b = appendI64(appendString(b, topic), opts.Delay.Milliseconds())
	b = appendU32(b, uint32(len(hs)))
	for _, h := range hs {
		b = appendHandle(b, h)
	}
	if opts.Reason != "" {
		b = append(binary.AppendUvarint(b, uint64(len(opts.Reason))), opts.Reason...)
	}
	return b
}

func decodeNackDelayed(p []byte) (string, ports.NackOptions, []domain.ReceiptHandle, error) {
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
	var reason string
	if r.err == nil && len(r.b) > 0 {
		reason = readNackReason(&r)
	}
	if err := r.end("nack delayed"); err != nil {
		return "", ports.NackOptions{}, nil, fmt.Errorf("decode nack delayed: %w", err)
	}
	return topic, ports.NackOptions{Delay: time.Duration(delayMs) * time.Millisecond, Reason: reason}, hs, nil
}

// readNackReason reads op 39's trailing reason: a minimal uvarint length
// of 1 to deadletter.ReasonBytesMax, then that many bytes of UTF-8.
func readNackReason(r *reader) string {
	n, size := binary.Uvarint(r.b)
	switch {
	case size <= 0:
		r.fail("reason length: bad uvarint")
		return ""
	case size != len(binary.AppendUvarint(nil, n)):
		r.fail("reason length: uvarint of %d bytes for %d", size, n)
		return ""
	case n == 0 || n > deadletter.ReasonBytesMax:
		r.fail("reason of %d bytes (want 1 to %d)", n, deadletter.ReasonBytesMax)
		return ""
	}
	r.b = r.b[size:]
	v := r.take(int(n), "reason")
	if r.err == nil && !utf8.Valid(v) {
		r.fail("reason: not UTF-8")
		return ""
	}
	return string(v)
}

// NackRemote nacks hs on node with opts in one NackDelayed call under the
// 2 s settle budget. It does not ride the ack lane's window: a nack with
// a delay or a reason is rare and its handles already come grouped per
// owner. An owner without op 39 answers every handle a
// domain.ErrPrecondition refusal.
func (p *Peers) NackRemote(ctx context.Context, node, topic string, hs []domain.ReceiptHandle, opts ports.NackOptions) ([]error, error) {
	if len(hs) == 0 {
		return []error{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	decode := func(body []byte) ([]error, error) { return decodeItemReplies(body, node, OpNackDelayed) }
	errs, err := callList(ctx, p, node, OpNackDelayed, appendNackDelayed(nil, topic, opts, hs), "nack delayed", len(hs), decode)
	if errors.Is(err, ErrUnsupportedOp) {
		return repeat(domain.Refuse(domain.ErrPrecondition, nackOlderOwnerMessage), len(hs)), nil
	}
	return errs, err
}

// registerNackDelayed serves NackDelayed (op 39) with s.
func registerNackDelayed(srv *Server, s Settler) {
	srv.Handle(OpNackDelayed, func(ctx context.Context, p []byte) ([]byte, error) {
		topic, opts, hs, err := decodeNackDelayed(p)
		if err != nil {
			return errReply(err), nil
		}
		errs, err := s.NackBatchWith(ctx, topic, hs, consume.NackOptions(opts))
		if err == nil && len(errs) != len(hs) {
			err = fmt.Errorf("quicpeer: settler answered %d outcomes for %d handles", len(errs), len(hs))
		}
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendItemReplies(nil, errs)), nil
	})
}

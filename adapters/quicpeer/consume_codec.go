package quicpeer

import (
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Consume (op 2), ack (3), extend (18), nack (19) and AckBatch (32)
// payloads. Part of the wire format and must never change:
//
//	consume request  topic string | mode u8 | partition i32 | pinned bool |
//	                 offset i64 | max i32 | wait_ms i64 | local_only bool | claim bool |
//	                 [identity string | [token_from string | token_ttl_ms u32]]
//
// The trailing identity is sent only when the request acts for an
// authenticated user (security on), or, empty when it acts for none, to
// reach the token after it; a release that predates it never runs
// secured, so it is never sent one. The token rides a probe
// (ProbeLeavingToken): node token_from asks for a delivery token of the
// topic lasting token_ttl_ms (1 ms to 1 h) should the probe find nothing.
// A release that predates it refuses the trailing bytes (bad_payload).
//	consume reply    deliveries u32 | deliveries × (topic string | partition i32 |
//	                 offset i64 | committed_at_ms i64 | key bytes | payload bytes |
//	                 leased bool | [handle partition i32 | offset i64 | nonce u64])
//	settle request   topic string | handle partition i32 | offset i64 | nonce u64
//	ack batch        topic string | items u32 | items × (mode u8 | partition i32 |
//	                 offset i64 | nonce u64)
//	ack batch reply  items u32 | items × (status u16 | code string | detail string)
//
// A settle answers 204 with no body; an ack batch item answers 204, or the
// refusal the single op would have answered.

const (
	deliveryWireMinBytes = 4 + 4 + 8 + 8 + 4 + 4 + 1
	ackItemWireBytes     = 1 + 4 + 8 + 8
	itemReplyMinBytes    = 2 + 4 + 4
)

// consumeToken is the delivery token a probe carries (zero: none).
type consumeToken struct {
	from string
	ttl  time.Duration
}

func appendConsumeRequest(b []byte, req ports.RemoteConsume) []byte {
	return appendConsumeWith(b, req, consumeToken{})
}

// appendConsumeWith encodes req and, when tok.ttl > 0, the token after it.
func appendConsumeWith(b []byte, req ports.RemoteConsume, tok consumeToken) []byte {
	b = appendString(b, req.Topic)
	b = appendU8(b, uint8(req.Mode))
	b = appendI32(b, req.Partition)
	b = appendBool(b, req.Pinned)
	b = appendI64(b, req.Offset)
	b = appendI32(b, req.Max)
	b = appendI64(b, req.Wait.Milliseconds())
	b = appendBool(b, req.LocalOnly)
	b = appendBool(b, req.Claim)
	if req.Identity != "" || tok.ttl > 0 {
		b = appendString(b, req.Identity)
	}
	if tok.ttl > 0 {
		ms := min(max(tok.ttl.Milliseconds(), 1), int64(tokenTTLMaxMs))
		b = appendU32(appendString(b, tok.from), uint32(ms))
	}
	return b
}

func decodeConsumeRequest(p []byte) (ports.RemoteConsume, consumeToken, error) {
	r := reader{b: p}
	req := ports.RemoteConsume{
		Topic:     r.string("topic", wireNameMaxBytes),
		Mode:      ports.ConsumeMode(r.u8("mode")),
		Partition: r.i32("partition"),
		Pinned:    r.bool("pinned"),
		Offset:    r.i64("offset"),
		Max:       r.i32("max"),
	}
	waitMs := r.i64("wait_ms")
	req.LocalOnly = r.bool("local_only")
	req.Claim = r.bool("claim")
	if r.err == nil && len(r.b) > 0 {
		req.Identity = r.string("identity", wireIdentityMaxBytes)
	}
	var tok consumeToken
	if r.err == nil && len(r.b) > 0 {
		tok.from = r.string("token_from", wireNameMaxBytes)
		ms := r.u32("token_ttl_ms")
		if r.err == nil && (tok.from == "" || ms == 0 || ms > tokenTTLMaxMs) {
			r.fail("token for %q of %d ms", tok.from, ms)
		}
		tok.ttl = time.Duration(ms) * time.Millisecond
	}
	switch {
	case r.err != nil:
	case req.Mode > ports.ConsumeReplay:
		r.fail("consume mode %d", req.Mode)
	case waitMs < 0 || waitMs > int64(time.Hour/time.Millisecond):
		r.fail("wait of %d ms", waitMs)
	}
	req.Wait = time.Duration(waitMs) * time.Millisecond
	if err := r.end("consume request"); err != nil {
		return ports.RemoteConsume{}, consumeToken{}, fmt.Errorf("decode consume: %w", err)
	}
	return req, tok, nil
}

func appendDeliveries(b []byte, ds []domain.Delivery) []byte {
	b = appendU32(b, uint32(len(ds)))
	for _, d := range ds {
		b = appendString(b, d.Topic)
		b = appendI32(b, d.Partition)
		b = appendI64(b, d.Record.Offset)
		b = appendI64(b, d.Record.CommittedAtMs)
		b = appendBytes(b, d.Record.Key)
		b = appendBytes(b, d.Record.Payload)
		b = appendBool(b, d.Handle != nil)
		if d.Handle != nil {
			b = appendHandle(b, *d.Handle)
		}
	}
	return b
}

// decodeDeliveries decodes a consume reply body. Keys and payloads alias
// body.
func decodeDeliveries(body []byte) ([]domain.Delivery, error) {
	r := reader{b: body}
	n := r.count("delivery count", deliveryWireMinBytes, consumeDeliveriesMaxCount)
	var ds []domain.Delivery
	if r.err == nil && n > 0 {
		ds = make([]domain.Delivery, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		d := domain.Delivery{Topic: r.string("topic", wireNameMaxBytes), Partition: r.i32("partition")}
		d.Record.Offset = r.i64("offset")
		d.Record.CommittedAtMs = r.i64("committed_at_ms")
		d.Record.Key = r.bytes("key")
		d.Record.Payload = r.bytes("payload")
		if r.bool("leased") {
			h := readHandle(&r)
			d.Handle = &h
		}
		ds[i] = d
	}
	if err := r.end("consume reply"); err != nil {
		return nil, fmt.Errorf("decode consume reply: %w", err)
	}
	return ds, nil
}

func appendHandle(b []byte, h domain.ReceiptHandle) []byte {
	b = appendI32(b, h.Partition)
	b = appendI64(b, h.Offset)
	return appendU64(b, h.Nonce)
}

func readHandle(r *reader) domain.ReceiptHandle {
	return domain.ReceiptHandle{Partition: r.i32("handle partition"), Offset: r.i64("handle offset"), Nonce: r.u64("handle nonce")}
}

func appendSettleRequest(b []byte, topic string, h domain.ReceiptHandle) []byte {
	return appendHandle(appendString(b, topic), h)
}

func decodeSettleRequest(p []byte) (string, domain.ReceiptHandle, error) {
	r := reader{b: p}
	topic := r.string("topic", wireNameMaxBytes)
	h := readHandle(&r)
	if err := r.end("settle request"); err != nil {
		return "", domain.ReceiptHandle{}, fmt.Errorf("decode settle: %w", err)
	}
	return topic, h, nil
}

// ackItem is one record of an AckBatch.
type ackItem struct {
	op     ports.SettleOp
	handle domain.ReceiptHandle
}

func appendAckBatch(b []byte, topic string, items []ackItem) []byte {
	b = appendString(b, topic)
	b = appendU32(b, uint32(len(items)))
	for _, it := range items {
		b = appendHandle(appendU8(b, uint8(it.op)), it.handle)
	}
	return b
}

func decodeAckBatch(p []byte) (string, []ackItem, error) {
	r := reader{b: p}
	topic := r.string("topic", wireNameMaxBytes)
	n := r.count("item count", ackItemWireBytes, ackBatchItemsMaxCount)
	items := make([]ackItem, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		op := ports.SettleOp(r.u8("mode"))
		if op > ports.SettleNack {
			r.fail("settle mode %d", op)
		}
		items = append(items, ackItem{op: op, handle: readHandle(&r)})
	}
	if err := r.end("ack batch"); err != nil {
		return "", nil, fmt.Errorf("decode ack batch: %w", err)
	}
	return topic, items, nil
}

// appendItemReplies encodes one outcome per item: 204 with no code, or its
// refusal (always with a code).
func appendItemReplies(b []byte, errs []error) []byte {
	b = appendU32(b, uint32(len(errs)))
	for _, err := range errs {
		status, code, detail := statusNoContent, "", ""
		if err != nil {
			status, code, detail = refusalOf(err)
		}
		b = appendString(appendString(appendU16(b, status), code), detail)
	}
	return b
}

func decodeItemReplies(body []byte, peer string, op Op) ([]error, error) {
	r := reader{b: body}
	n := r.count("item count", itemReplyMinBytes, ackBatchItemsMaxCount)
	errs := make([]error, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		rp := reply{status: r.u16("item status"), code: r.string("item code", wireNameMaxBytes), detail: r.string("item detail", wireMessageMaxBytes)}
		var err error
		if rp.code != "" {
			err = rp.err(peer, op)
		}
		errs = append(errs, err)
	}
	if err := r.end("ack batch reply"); err != nil {
		return nil, fmt.Errorf("decode ack batch reply: %w", err)
	}
	return errs, nil
}

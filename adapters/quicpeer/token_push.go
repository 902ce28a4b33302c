package quicpeer

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
)

// TokenPush (op 41) payload, this node's extension (internals.md §5.5, "A
// notification carries its record"). Part of the wire format and must
// never change:
//
//	token push   from string | topic string | deliveries (as a consume reply)
//	push reply   taken bool (false: a pass, the owner releases them)
//	             [again_ttl_ms u32] (written when the node asks for its
//	             token again: 1 ms to 1 h)
//
// from is the owner that reserved the deliveries for the called node; the
// called node acks them to from as it would a claim's.

// tokenPushMaxCount caps the deliveries of one push (the owner sends one).
const tokenPushMaxCount = 100

func appendTokenPush(b []byte, from, topic string, ds []domain.Delivery) []byte {
	return appendDeliveries(appendString(appendString(b, from), topic), ds)
}

// decodeTokenPush decodes a push; its keys and payloads are copies, not
// views of p (the frame buffer is reused once the handler returns, while
// a parked consumer hands them on later).
func decodeTokenPush(p []byte) (from, topic string, ds []domain.Delivery, err error) {
	r := reader{b: p}
	from = r.string("from", wireNameMaxBytes)
	topic = r.string("topic", wireNameMaxBytes)
	if r.err != nil {
		return "", "", nil, fmt.Errorf("decode token push: %w", r.err)
	}
	ds, err = decodeDeliveries(bytes.Clone(r.b))
	switch {
	case err != nil:
		return "", "", nil, fmt.Errorf("decode token push: %w", err)
	case len(ds) > tokenPushMaxCount:
		return "", "", nil, fmt.Errorf("decode token push: %d deliveries (cap %d): %w", len(ds), tokenPushMaxCount, ErrBadPayload)
	}
	for _, d := range ds {
		if d.Topic != topic || d.Handle == nil {
			return "", "", nil, fmt.Errorf("decode token push: a delivery of %q (leased %t) in a push of %q: %w", d.Topic, d.Handle != nil, topic, ErrBadPayload)
		}
	}
	return from, topic, ds, nil
}

func appendPushReply(b []byte, taken bool, again time.Duration) []byte {
	b = appendBool(b, taken)
	if taken && again > 0 {
		b = appendU32(b, uint32(min(max(again.Milliseconds(), 1), int64(tokenTTLMaxMs))))
	}
	return b
}

func decodePushReply(body []byte) (taken bool, again time.Duration, err error) {
	r := reader{b: body}
	taken = r.bool("taken")
	if r.err == nil && len(r.b) > 0 {
		ms := r.u32("again_ttl_ms")
		if r.err == nil && (!taken || ms == 0 || ms > tokenTTLMaxMs) {
			r.fail("a token asked again for %d ms (taken %t)", ms, taken)
		}
		again = time.Duration(ms) * time.Millisecond
	}
	if err := r.end("push reply"); err != nil {
		return false, 0, err
	}
	return taken, again, nil
}

// PushToken hands node the deliveries from reserved for its token of topic
// (op 41) under ctx's deadline or the 5 s reply default. A node that
// predates the operation answers domain.ErrNotImplemented.
func (p *Peers) PushToken(ctx context.Context, node, from, topic string, ds []domain.Delivery) (bool, time.Duration, error) {
	if len(ds) == 0 || len(ds) > tokenPushMaxCount {
		return false, 0, fmt.Errorf("quicpeer: push of %d deliveries (1 to %d): %w", len(ds), tokenPushMaxCount, domain.ErrInvalidArgument)
	}
	body, err := p.call(ctx, node, OpTokenPush, appendTokenPush(nil, from, topic, ds))
	if err != nil {
		return false, 0, legacyOp(err, node, OpTokenPush)
	}
	taken, again, err := decodePushReply(body)
	if err != nil {
		return false, 0, unreadableReply("push", node, err)
	}
	return taken, again, nil
}

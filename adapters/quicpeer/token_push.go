package quicpeer

import (
	"bytes"
	"context"
	"fmt"

	"github.com/narad/narad/domain"
)

// TokenPush (op 41) payload, this node's extension (internals.md §5.5, "A
// notification carries its record"). Part of the wire format and must
// never change:
//
//	token push   from string | topic string | deliveries (as a consume reply)
//	push reply   taken bool (false: a pass, the owner releases them)
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

// PushToken hands node the deliveries from reserved for its token of topic
// (op 41) under ctx's deadline or the 5 s reply default. A node that
// predates the operation answers domain.ErrNotImplemented.
func (p *Peers) PushToken(ctx context.Context, node, from, topic string, ds []domain.Delivery) (bool, error) {
	if len(ds) == 0 || len(ds) > tokenPushMaxCount {
		return false, fmt.Errorf("quicpeer: push of %d deliveries (1 to %d): %w", len(ds), tokenPushMaxCount, domain.ErrInvalidArgument)
	}
	body, err := p.call(ctx, node, OpTokenPush, appendTokenPush(nil, from, topic, ds))
	if err != nil {
		return false, legacyOp(err, node, OpTokenPush)
	}
	taken, err := decodeNotifyReply(body)
	if err != nil {
		return false, unreadableReply("push", node, err)
	}
	return taken, nil
}

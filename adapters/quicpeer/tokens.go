package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// TokenRegister (op 30) and TokenNotify (op 31) payloads (internals.md
// §5.5). Part of the wire format and must never change:
//
//	token register  from string | tokens u32 | tokens × (topic string | ttl_ms u32)
//	token notify    from string | topic string
//	notify reply    claimed bool (false: a pass)
//
// from is the calling node's member id: the owner calls a registration's
// node back by it, and a notified node claims from it. A TTL is a duration,
// never a deadline. A registration answers 204 with no body.

const (
	tokenWireMinBytes = 4 + 4
	// tokensMaxCount caps the registrations of one TokenRegister (one per
	// topic with consumers parked on the sending node).
	tokensMaxCount = 4096
	// tokenTTLMaxMs caps a registration's TTL on the wire.
	tokenTTLMaxMs = uint32(time.Hour / time.Millisecond)
)

var _ ports.TokenPeers = (*Peers)(nil)

func appendTokenRegister(b []byte, from string, regs []ports.TokenRegistration) []byte {
	b = appendString(b, from)
	b = appendU32(b, uint32(len(regs)))
	for _, r := range regs {
		ms := min(max(r.TTL.Milliseconds(), 1), int64(tokenTTLMaxMs))
		b = appendU32(appendString(b, r.Topic), uint32(ms))
	}
	return b
}

func decodeTokenRegister(p []byte) (string, []ports.TokenRegistration, error) {
	r := reader{b: p}
	from := r.string("from", wireNameMaxBytes)
	n := r.count("token count", tokenWireMinBytes, tokensMaxCount)
	regs := make([]ports.TokenRegistration, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		topic := r.string("topic", wireNameMaxBytes)
		ms := r.u32("ttl_ms")
		if r.err == nil && (ms == 0 || ms > tokenTTLMaxMs) {
			r.fail("ttl of %d ms", ms)
		}
		regs = append(regs, ports.TokenRegistration{Topic: topic, TTL: time.Duration(ms) * time.Millisecond})
	}
	if err := r.end("token register"); err != nil {
		return "", nil, fmt.Errorf("decode token register: %w", err)
	}
	return from, regs, nil
}

func appendTokenNotify(b []byte, from, topic string) []byte {
	return appendString(appendString(b, from), topic)
}

func decodeTokenNotify(p []byte) (from, topic string, err error) {
	r := reader{b: p}
	from = r.string("from", wireNameMaxBytes)
	topic = r.string("topic", wireNameMaxBytes)
	if err := r.end("token notify"); err != nil {
		return "", "", fmt.Errorf("decode token notify: %w", err)
	}
	return from, topic, nil
}

func decodeNotifyReply(body []byte) (bool, error) {
	r := reader{b: body}
	claimed := r.bool("claimed")
	return claimed, r.end("notify reply")
}

// RegisterTokens leaves regs with owner on behalf of from (op 30), under
// ctx's deadline or the 5 s reply default. An owner that predates the
// operation answers domain.ErrNotImplemented.
func (p *Peers) RegisterTokens(ctx context.Context, owner, from string, regs []ports.TokenRegistration) error {
	if len(regs) > tokensMaxCount {
		return fmt.Errorf("quicpeer: %d token registrations (cap %d): %w", len(regs), tokensMaxCount, domain.ErrInvalidArgument)
	}
	_, err := p.call(ctx, owner, OpTokenRegister, appendTokenRegister(nil, from, regs))
	return legacyOp(err, owner, OpTokenRegister)
}

// NotifyToken tells node that from holds a record of topic for it (op 31).
// A node that predates the operation answers domain.ErrNotImplemented.
func (p *Peers) NotifyToken(ctx context.Context, node, from, topic string) (bool, error) {
	body, err := p.call(ctx, node, OpTokenNotify, appendTokenNotify(nil, from, topic))
	if err != nil {
		return false, legacyOp(err, node, OpTokenNotify)
	}
	claimed, err := decodeNotifyReply(body)
	if err != nil {
		return false, unreadableReply("notify", node, err)
	}
	return claimed, nil
}

// ProbeLeavingToken probes owner (op 2, local only, no wait, under the
// probe budget) with a token of req.Topic for from lasting ttl after the
// request (ports.TokenPeers): an owner that finds nothing keeps the token.
// An owner that refuses the trailing token as a payload it cannot read
// (an older release) is probed again without it at once, on what is left
// of the budget, and probed without one for legacyPeerMemory.
func (p *Peers) ProbeLeavingToken(ctx context.Context, owner, from string, req ports.RemoteConsume, ttl time.Duration) ([]domain.Delivery, bool, error) {
	req.LocalOnly, req.Wait = true, 0
	if ttl <= 0 || p.probes.legacy(owner) {
		ds, err := p.ConsumeRemote(ctx, owner, req)
		return ds, false, err
	}
	ds, err := p.consumeWith(ctx, owner, req, consumeToken{from: from, ttl: ttl}, probeTimeout)
	if errors.Is(err, ErrPayloadRefused) {
		p.probes.remember(owner)
		ds, err := p.ConsumeRemote(ctx, owner, req)
		return ds, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return ds, len(ds) == 0, nil
}

// legacyOp turns a peer's refusal of an operation it does not know into
// domain.ErrNotImplemented: the peer answered (it is an older release), so
// the error is its refusal, not a transport failure.
func legacyOp(err error, node string, op Op) error {
	if errors.Is(err, ErrUnsupportedOp) {
		return fmt.Errorf("quicpeer: %s does not serve op %d: %w", node, op, domain.ErrNotImplemented)
	}
	return err
}

// Tokens serves delivery tokens on both sides: *consume.Service satisfies
// it.
type Tokens interface {
	// AcceptTokens takes a TokenRegister as the owner.
	AcceptTokens(from string, regs []ports.TokenRegistration) error
	// Notified takes a TokenNotify as the requesting node; false is a pass.
	Notified(from, topic string) bool
	// Pushed takes a TokenPush as the requesting node: ds were reserved
	// for it; false is a pass (the owner releases them). again > 0 asks
	// the owner to keep a token for this node that long.
	Pushed(from, topic string, ds []domain.Delivery) (taken bool, again time.Duration)
}

// RegisterTokens serves TokenRegister (op 30), TokenNotify (op 31) and
// TokenPush (op 41) with t. It panics on a nil t.
func RegisterTokens(srv *Server, t Tokens) {
	if t == nil {
		panic("quicpeer: nil tokens")
	}
	srv.Handle(OpTokenRegister, func(_ context.Context, p []byte) ([]byte, error) {
		from, regs, err := decodeTokenRegister(p)
		if err == nil {
			err = t.AcceptTokens(from, regs)
		}
		if err != nil {
			return errReply(err), nil
		}
		return appendReply(nil, statusNoContent, "", "", nil), nil
	})
	srv.Handle(OpTokenNotify, func(_ context.Context, p []byte) ([]byte, error) {
		from, topic, err := decodeTokenNotify(p)
		if err != nil {
			return errReply(err), nil
		}
		return okReply(appendBool(nil, t.Notified(from, topic))), nil
	})
	srv.Handle(OpTokenPush, func(_ context.Context, p []byte) ([]byte, error) {
		from, topic, ds, err := decodeTokenPush(p)
		if err != nil {
			return errReply(err), nil
		}
		taken, again := t.Pushed(from, topic, ds)
		return okReply(appendPushReply(nil, taken, again)), nil
	})
}

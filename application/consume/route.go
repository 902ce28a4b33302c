package consume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// forwardRefusals are the client answers of a forward's transport failure
// (ports.PeerForwarder's classes): notSent when the request never left
// this node, noAnswer when it did and no answer came back.
type forwardRefusals struct {
	notSent, noAnswer error
}

// consumeRefusals: a forwarded consume that failed in transport is 502
// either way (api.md §3.3).
func consumeRefusals(node string) forwardRefusals {
	return forwardRefusals{
		notSent:  domain.Refuse(domain.ErrOwnerNoAnswer, fmt.Sprintf("the partition owner %s could not be reached; retry", node)),
		noAnswer: domain.Refuse(domain.ErrOwnerNoAnswer, fmt.Sprintf("the partition owner %s did not answer; retry", node)),
	}
}

// settleRefusals: a forwarded ack, extend or nack that never left is 503,
// nothing applied; one without an answer is 502, maybe applied (api.md
// §2.15).
var settleRefusals = forwardRefusals{
	notSent:  domain.Refuse(domain.ErrOwnerNotReached, ackNotSentMessage),
	noAnswer: domain.Refuse(domain.ErrOwnerNoAnswer, ackNoAnswerMessage),
}

// forwardFailure turns a forward's error into the client's answer: the
// owner's refusal as is, the caller's own cancellation as is, a transport
// failure as the refusal of its class.
func forwardFailure(ctx context.Context, node string, err error, refusals forwardRefusals) error {
	notSent := errors.Is(err, domain.ErrNotSent)
	switch {
	case !notSent && !errors.Is(err, domain.ErrNoAnswer):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	case notSent:
		return fmt.Errorf("consume: forward to %s: %v: %w", node, err, refusals.notSent)
	}
	return fmt.Errorf("consume: forward to %s: %v: %w", node, err, refusals.noAnswer)
}

// deadMembers is the set of member ids the member table marks dead.
func (s *Service) deadMembers() (map[string]bool, error) {
	ms, err := s.cluster.Members()
	if err != nil {
		return nil, fmt.Errorf("consume: read members: %w", err)
	}
	dead := map[string]bool{}
	for _, m := range ms {
		if m.Status == meta.StatusDead {
			dead[m.ID] = true
		}
	}
	return dead, nil
}

// ownerDownErr is the refusal for a partition whose owner is marked dead
// (story F12: 503, never 421).
func ownerDownErr(t meta.Topic, p int32, node string) error {
	return fmt.Errorf("consume: %s/%d owner %s: %w", t.Name, p, node, domain.ErrOwnerDown)
}

// checkOwnerAlive refuses a forward to a node marked dead.
func (s *Service) checkOwnerAlive(t meta.Topic, p int32, node string) error {
	dead, err := s.deadMembers()
	if err != nil {
		return err
	}
	if dead[node] {
		return ownerDownErr(t, p, node)
	}
	return nil
}

// remoteOwners lists the other live nodes owning some of t's partitions,
// each once, in an order rotated per call, and says whether this node owns
// some too.
func (s *Service) remoteOwners(t meta.Topic) (owners []string, ownsLocal bool, err error) {
	dead, err := s.deadMembers()
	if err != nil {
		return nil, false, err
	}
	self, parts, id := s.self, t.Partitions, t.ID // the closure escapes: not t itself
	err = s.cluster.EachAssignment(t.Name, func(a meta.Assignment) {
		switch {
		case a.Partition >= parts || !a.BelongsTo(id) || a.Owner == "":
		case a.Owner == self:
			ownsLocal = true
		case !slices.Contains(owners, a.Owner) && !dead[a.Owner]:
			owners = append(owners, a.Owner)
		}
	})
	if err != nil {
		return nil, false, fmt.Errorf("consume: read assignments of %s: %w", t.Name, err)
	}
	if len(owners) > 1 {
		start := int(s.rotor.Add(1) % uint32(len(owners)))
		owners = append(owners[start:], owners[:start]...)
	}
	return owners, ownsLocal, nil
}

// remoteRequest is req as the owner's RPC carries it.
func remoteRequest(req Request) ports.RemoteConsume {
	modes := [...]ports.ConsumeMode{
		ModeQueue: ports.ConsumeQueue, ModePinned: ports.ConsumePinned,
		ModeBatch: ports.ConsumeBatch, ModeReplay: ports.ConsumeReplay,
	}
	r := ports.RemoteConsume{
		Topic: req.Topic, Mode: modes[req.Mode], Partition: req.Partition, Pinned: req.Pinned,
		Offset: req.Offset, Wait: max(req.Wait, 0), Identity: req.ForwardIdentity,
	}
	if req.Mode == ModeBatch {
		r.Max = int32(req.Max)
	}
	if req.Mode == ModeReplay {
		r.Wait = 0
	}
	return r
}

// forwardConsume runs req on node, the owner of its pinned partition (or
// of the whole request on a gateway). Deliveries that arrive after the
// client gave up are released on the owner at once.
func (s *Service) forwardConsume(ctx context.Context, node string, req ports.RemoteConsume) ([]domain.Delivery, error) {
	ds, err := s.peers.ConsumeRemote(ctx, node, req)
	return s.forwarded(ctx, node, req, ds, err)
}

// forwarded is the answer of a forward of req to node: a transport
// failure as the client's refusal, deliveries nobody waits for any more
// released.
func (s *Service) forwarded(ctx context.Context, node string, req ports.RemoteConsume, ds []domain.Delivery, err error) ([]domain.Delivery, error) {
	if err != nil {
		return nil, forwardFailure(ctx, node, err, consumeRefusals(node))
	}
	if ctx.Err() != nil && len(ds) > 0 {
		s.releaseRemote(ctx, node, req.Topic, ds)
		return nil, ctx.Err()
	}
	return ds, nil
}

// releaseRemote nacks forwarded deliveries nobody will receive, so they
// return to circulation before their visibility timeout.
func (s *Service) releaseRemote(ctx context.Context, node, topic string, ds []domain.Delivery) {
	hs := make([]domain.ReceiptHandle, 0, len(ds))
	for _, d := range ds {
		if d.Handle != nil {
			hs = append(hs, *d.Handle)
		}
	}
	if len(hs) == 0 {
		return
	}
	if _, err := s.peers.SettleRemote(context.WithoutCancel(ctx), node, topic, hs, ports.SettleNack); err != nil {
		s.log.Warn("release of forwarded deliveries failed; they return after their visibility timeout",
			"node", node, "topic", topic, "count", len(hs), "err", err)
	}
}

// probe asks each owner in turn for what it can hand out at once
// (local_only, no wait) and returns the first answer that holds records
// with the node that gave it; a failed probe counts as empty (internals.md
// §5.5). A consumer that will park until deadline sends a token with the
// last probe of the round (probeOrder), never to emptied, the owner whose
// last notification gave nothing (it goes without a token for a round).
func (s *Service) probe(ctx context.Context, owners []string, req ports.RemoteConsume, deadline time.Time, emptied string) ([]domain.Delivery, string) {
	req.LocalOnly, req.Wait = true, 0
	owners, carrier := s.probeOrder(owners, req.Topic, deadline, emptied)
	for _, node := range owners {
		if ctx.Err() != nil {
			return nil, ""
		}
		var ds []domain.Delivery
		var err error
		if node == carrier {
			ds, err = s.probeLeavingToken(ctx, node, req, deadline)
		} else {
			ds, err = s.forwardConsume(ctx, node, req)
		}
		if err == nil && len(ds) > 0 {
			return ds, node
		}
	}
	return nil, ""
}

// probeOrder returns owners in the order to probe them and the one whose
// probe carries this node's token of topic ("" for none). Owners that
// must get a token for a consumer parking until deadline (none of this
// node's there that it could share, and not emptied) go last, in their
// rotated order; the last of them is the carrier. Its token is in place
// as the consumer parks, one round trip after the owner found nothing, so
// a notification through it finds the consumer parked; a token sent with
// an earlier probe could be spent while the later probes run, before the
// consumer parks (a pass). The others get theirs from leaveTokens once it
// parked.
func (s *Service) probeOrder(owners []string, topic string, deadline time.Time, emptied string) ([]string, string) {
	if s.tokenPeers == nil || time.Until(deadline) <= 0 || len(owners) == 0 || !s.callable() {
		return owners, ""
	}
	now := s.clock.Now()
	until := now.Add(time.Until(deadline))
	var held, needing []string
	for _, o := range owners {
		if o == emptied || s.regs.polled(o, now) || s.regs.shareable(o, topic, now, until) {
			held = append(held, o)
		} else {
			needing = append(needing, o)
		}
	}
	if len(needing) == 0 {
		return owners, ""
	}
	return append(held, needing...), needing[len(needing)-1]
}

// probeLeavingToken probes node with a token lasting the rest of the wait
// plus the grace: an owner that finds nothing keeps it, so the consumer
// parks without a TokenRegister round trip (leaveTokens then finds it
// shareable).
func (s *Service) probeLeavingToken(ctx context.Context, node string, req ports.RemoteConsume, deadline time.Time) ([]domain.Delivery, error) {
	now, ticket := s.clock.Now(), s.regs.begin()
	ttl := time.Until(deadline) + tokenTTLGrace
	ds, left, err := s.tokenPeers.ProbeLeavingToken(ctx, node, s.self, req, ttl)
	if left {
		s.regs.sent(node, []ports.TokenRegistration{{Topic: req.Topic, TTL: ttl}}, now, ticket)
	}
	return s.forwarded(ctx, node, req, ds, err)
}

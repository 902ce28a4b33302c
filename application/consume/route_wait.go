package consume

import (
	"context"
	"slices"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// waitRouted finds one record (or a batch, on a gateway) after an empty
// local pass, in the cluster order of internals.md §5.5: a non-blocking
// probe of every other live owner; then, for the rest of the wait, the
// consumer parks on the local waiter queue and leaves a delivery token
// with each of those owners. A long poll's first round skips each owner
// holding a live token from this node already (spared): such an owner
// offers its records through that, and a probe could only race its own
// parked consumers. A local record, a record an owner pushed through the
// token, or an owner's notification (then a claim to that owner; owners
// of an older release) ends the wait; every 2 s of it the owners
// are probed again as a safety net. Where tokens cannot be left (no token
// carrier, an owner that refused them, no address to be called back on)
// the consumer polls instead: probes paced 100 ms doubling to 1 s. A node
// that owns every placed partition (a single node) has no owner to poll:
// its consumer re-reads the placements every 2 s of its wait. It
// returns the deliveries and the node that served them ("" for this node).
// A topic with no live owner yet is held for its wait, the route table
// read again every round.
func (s *Service) waitRouted(ctx context.Context, t meta.Topic, sc scope, req Request) ([]domain.Delivery, string, error) {
	deadline := time.Now().Add(max(req.Wait, 0))
	pause := reprobeIntervalMin
	emptied := "" // an owner whose last notification gave nothing: polled for one round
	for first := true; ; first = false {
		owners, ownsLocal, err := s.remoteOwners(t)
		if err != nil {
			return nil, "", err
		}
		preq := probeRequest(req, ownsLocal)
		probed := owners
		if first {
			probed = s.unspared(t.Name, owners, req.Wait)
		}
		if ds, node := s.probe(ctx, probed, preq, deadline, emptied); len(ds) > 0 {
			return ds, node, nil
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		round := pause
		if len(owners) == 0 && ownsLocal {
			round = gatewayReprobeInterval // every partition is here: nothing to poll, only placements to re-read
		}
		a, tokens, err := s.parkRouted(ctx, t, sc, owners, emptied, deadline, round)
		emptied = ""
		switch {
		case a.from != "":
			ds, err := s.forwarded(ctx, a.from, preq, a.ds, nil)
			return s.topUpPushed(ctx, a.from, preq, ds), a.from, err
		case err != nil || len(a.ds) > 0:
			return a.ds, "", err
		case a.claim != "":
			if ds, err := s.claim(ctx, a.claim, preq); err != nil || len(ds) > 0 {
				return ds, a.claim, err
			}
			emptied = a.claim // no token there next round: a wrong estimate cannot spin
		}
		if !tokens || emptied != "" {
			pause = min(2*pause, reprobeIntervalMax)
		}
	}
}

// unspared is the owners a consume's first probe round must ask: a long
// poll skips each owner holding a live token of topic from this node
// (internals.md §5.5), a consume without a wait asks them all.
func (s *Service) unspared(topic string, owners []string, wait time.Duration) []string {
	if wait <= 0 {
		return owners
	}
	return s.regs.uncovered(owners, topic, s.clock.Now())
}

// without is owners less one ("" keeps them all).
func without(owners []string, node string) []string {
	if node == "" || !slices.Contains(owners, node) {
		return owners
	}
	out := make([]string, 0, len(owners)-1)
	for _, o := range owners {
		if o != node {
			out = append(out, o)
		}
	}
	return out
}

// parkRouted parks a routed consumer for one round: once parked it leaves
// tokens with owners (but skip), then waits for a local record or a
// notification until the safety re-probe (tokens left with every owner) or
// the polling pause, and no later than deadline.
func (s *Service) parkRouted(ctx context.Context, t meta.Topic, sc scope, owners []string, skip string, deadline time.Time, pause time.Duration) (answer, bool, error) {
	left := time.Until(deadline)
	w := &waiter{ctx: ctx, topic: t.Name, id: domain.TopicID(t.ID), sc: sc, routed: true,
		until: s.clock.Now().Add(left), reply: make(chan answer, 1)}
	s.pump.join(w)
	rest := without(owners, skip)
	tokens := s.leaveTokens(ctx, t.Name, rest, left) && len(rest) == len(owners)
	wait := pause
	if tokens {
		wait = gatewayReprobeInterval
	}
	a, err := s.await(ctx, w, max(min(wait, time.Until(deadline)), 0))
	return a, tokens, err
}

// topUpPushed fills a gateway's batch from owner, which pushed ds (one
// record) through this node's token: one more probe for up to the rest of
// the batch, as the claim a notification led to used to ask for the whole
// batch (api.md §2.14.3).
func (s *Service) topUpPushed(ctx context.Context, owner string, req ports.RemoteConsume, ds []domain.Delivery) []domain.Delivery {
	if req.Mode != ports.ConsumeBatch || len(ds) == 0 || int(req.Max) <= len(ds) {
		return ds
	}
	req.LocalOnly, req.Wait, req.Max = true, 0, req.Max-int32(len(ds))
	if req.Max == 1 {
		req.Mode, req.Max = ports.ConsumeQueue, 0
	}
	more, err := s.forwardConsume(ctx, owner, req)
	if err != nil {
		return ds
	}
	return append(ds, more...)
}

// probeRequest is what a probe asks an owner for: one record, or on a
// gateway (a node owning none of the topic) the whole batch (api.md
// §2.14.3).
func probeRequest(req Request, ownsLocal bool) ports.RemoteConsume {
	r := remoteRequest(req)
	if req.Mode == ModeBatch && ownsLocal {
		r.Mode, r.Max = ports.ConsumeQueue, 0
	}
	return r
}

package consume

import (
	"context"
	"errors"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Pushed tokens (internals.md §5.5, "A notification carries its record").
// The owner spends a token by reserving one record for the token's node
// and handing it over in the notification itself (TokenPush, op 41): the
// node gives it to one of its parked consumers, or passes and the owner
// releases it. A delivery through a token then takes one round trip
// instead of two (notify, then claim), and the owner holds nothing back.
// A node that predates the operation is notified as before (hold, notify,
// claim) for legacyPeerMemory, and so is every node for a topic with a
// dead-letter policy: reserving counts a receive durably, so each pass
// would spend one of the record's receives. A push whose answer was lost
// is sent again (the node answers a record it took already as taken,
// without handing it twice), so a slow answer does not leave a record
// leased for its whole visibility timeout.

// spend uses tk, a token of t: it pushes a record reserved for tk's node,
// or for a node that takes no pushes holds one back and notifies it. false
// when there was nothing to reserve (tk is put back).
func (s *Service) spend(ctx context.Context, t meta.Topic, tk token, now time.Time) bool {
	if s.maxReceivesOf(t) == 0 && s.tokens.pushes(tk.node, now) {
		ds, err := s.pass(ctx, t, scope{}, 1, batchScanBytesMax)
		if err != nil || len(ds) == 0 {
			s.tokens.restore(t.Name, tk)
			return false
		}
		s.push(ctx, tk.node, t.Name, ds)
		return true
	}
	s.tokens.hold(t.Name, now.Add(tokenHoldDuration))
	s.notify(ctx, tk.node, t.Name)
	return true
}

// restore puts back a token take returned and the pump could not spend
// (nothing to reserve after all), first in line, unless its node left a
// newer one meanwhile.
func (b *tokenBook) restore(topic string, tk token) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tt := b.topicLocked(topic)
	if tt.live[tk.node] != nil {
		return
	}
	back := &token{node: tk.node, expires: tk.expires}
	tt.fifo = append([]*token{back}, tt.fifo...)
	tt.live[tk.node] = back
	b.pending.Store(true)
}

// pushes reports whether node takes pushed records (it has not refused
// one within legacyPeerMemory).
func (b *tokenBook) pushes(node string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.unpushed.active(node, now)
}

// refusePushes notifies node instead of pushing to it until until.
func (b *tokenBook) refusePushes(node string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unpushed[node] = until
}

// push hands ds, reserved for node's token of topic, to node off the
// pump's goroutine. A pass, a call that never reached node or node's
// refusal releases them at once; a node that predates pushes gets the
// legacy notification instead (the record released and held back for its
// claim). A call whose answer was lost is sent again, up to pushAttempts
// calls in all; after that the records stay leased: node may have handed
// them to a consumer, and the visibility timeout brings them back
// otherwise.
func (s *Service) push(ctx context.Context, node, topic string, ds []domain.Delivery) {
	s.background.Go(func() {
		taken, again, err := s.pushOnce(ctx, node, topic, ds)
		for n := 1; n < pushAttempts && errors.Is(err, domain.ErrNoAnswer) && ctx.Err() == nil; n++ {
			taken, again, err = s.pushOnce(ctx, node, topic, ds)
		}
		switch {
		case err == nil && taken:
			for _, d := range ds {
				s.metrics.MessagesConsumed(topic, d.Partition, 1, len(d.Record.Payload))
			}
			if again > 0 {
				s.tokens.register(node, topic, again, s.clock.Now())
				s.pump.name(topic)
			}
		case errors.Is(err, domain.ErrNotImplemented):
			s.tokens.refusePushes(node, s.clock.Now().Add(legacyPeerMemory))
			s.log.Info("node takes no pushed deliveries; it is notified instead", "node", node)
			s.tokens.hold(topic, s.clock.Now().Add(tokenHoldDuration))
			s.release(ds, "")
			s.notify(ctx, node, topic)
		case errors.Is(err, domain.ErrNoAnswer):
			s.log.Info("delivery token push unanswered; its record returns after the visibility timeout",
				"node", node, "topic", topic, "attempts", pushAttempts, "err", err)
		default:
			s.release(ds, "")
		}
	})
}

// pushOnce makes one TokenPush call under the token budget.
func (s *Service) pushOnce(ctx context.Context, node, topic string, ds []domain.Delivery) (bool, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, tokenRPCTimeout)
	defer cancel()
	return s.tokenPeers.PushToken(ctx, node, s.self, topic, ds)
}

// Pushed is the requesting side of TokenPush (op 41): owner from spent
// this node's token of topic on ds, reserved for it. One consumer parked
// here for other owners' records gets them; taken is false for a pass
// (none is parked), and from releases them. When other consumers are
// still parked on topic, the answer asks from for the token again (again:
// its TTL, the longest of their waits plus the grace), so the next record
// there comes without a registration, and the next consumer parking here
// need not probe from.
func (s *Service) Pushed(from, topic string, ds []domain.Delivery) (taken bool, again time.Duration) {
	now := s.clock.Now()
	if len(ds) > 0 && s.regs.tookPush(from, ds[0], now) {
		return true, 0 // a push sent again after its answer was lost
	}
	s.regs.spent(from, topic, now)
	ticket := s.regs.begin() // after the spending: the token asked again is recorded
	if len(ds) == 0 || !s.pump.handPushed(topic, from, ds) {
		return false, 0
	}
	s.regs.took(from, ds[0], now)
	until, ok := s.pump.routedUntilOf(topic)
	if !ok || !until.After(now) {
		return true, 0
	}
	again = until.Sub(now) + tokenTTLGrace
	s.regs.sent(from, []ports.TokenRegistration{{Topic: topic, TTL: again}}, now, ticket)
	return true, again
}

// handBack passes on an answer that reached a consumer as it gave up:
// records reserved here are released, records an owner pushed go to the
// next parked consumer (or back to that owner), a notification goes to
// the next parked consumer.
func (s *Service) handBack(topic string, a answer) {
	switch {
	case a.from != "":
		if !s.pump.handPushed(topic, a.from, a.ds) {
			s.releaseRemote(context.Background(), a.from, topic, a.ds)
		}
	case a.claim != "":
		s.pump.handClaim(topic, a.claim)
	default:
		s.release(a.ds, "")
	}
}

// pushKey names a pushed record: its owner and its lease.
type pushKey struct {
	owner string
	topic string
	h     domain.ReceiptHandle
}

// took remembers that a consumer here took d, pushed by owner, for
// pushTakenMemory: a push of it sent again answers taken.
func (r *tokenRegs) took(owner string, d domain.Delivery, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.Handle != nil {
		r.pushed[pushKey{owner, d.Topic, *d.Handle}] = now
	}
}

// tookPush reports whether a consumer here took d, pushed by owner, within
// pushTakenMemory.
func (r *tokenRegs) tookPush(owner string, d domain.Delivery, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d.Handle == nil {
		return false
	}
	at, ok := r.pushed[pushKey{owner, d.Topic, *d.Handle}]
	return ok && now.Sub(at) <= pushTakenMemory
}

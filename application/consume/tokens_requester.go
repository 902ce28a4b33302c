package consume

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Delivery tokens, the requesting side (internals.md §5.5). A routed
// consumer whose probes came back empty parks here and leaves a token with
// every live owner of the topic; one token per (this node, topic) at each
// owner is shared by every consumer parked here. An owner's notification
// wakes one parked consumer, which claims the record from that owner (a
// second round trip). A keeper makes sure each owner keeps a live token
// while consumers wait, re-sending each at least every 5 s. Owners that
// refused a registration (an older release) are polled instead for 2 min,
// as are all owners when this node has no address to be called back on.

// tokenRegs is what this node registered where. Safe for concurrent use.
type tokenRegs struct {
	mu      sync.Mutex
	regs    map[regKey]tokenReg
	refused deadlines // owner -> polled instead until then
	// sends counts the registrations begun (TokenRegister or a probe's
	// token); each send takes the next number as its ticket.
	sends uint64
	// spentAt is the last notification that spent each token: a
	// registration begun before it, whose reply comes after it, is not
	// recorded (the owner spent it already: an owner may notify before its
	// answer to the registration arrives here). Sends and spendings are
	// ordered by ticket, not by clock, which may read the same for both.
	spentAt map[regKey]spending
	// pushed is the pushed records a consumer here took, for a push sent
	// again after its answer was lost (tokens_push.go).
	pushed map[pushKey]time.Time
}

// spending is a notification that spent a token: when, and the number of
// registrations begun by then.
type spending struct {
	at    time.Time
	sends uint64
}

type regKey struct{ owner, topic string }

// tokenReg is one registration this node holds at an owner.
type tokenReg struct {
	sentAt time.Time
	ends   time.Time // sentAt + its TTL
}

func newTokenRegs() *tokenRegs {
	return &tokenRegs{regs: map[regKey]tokenReg{}, refused: deadlines{}, spentAt: map[regKey]spending{}, pushed: map[pushKey]time.Time{}}
}

// shareable reports whether a consumer parking now until deadline can rely
// on the registration at owner: sent within the share window, and lasting
// past deadline.
func (r *tokenRegs) shareable(owner, topic string, now, deadline time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.regs[regKey{owner, topic}]
	return ok && now.Sub(reg.sentAt) < tokenShareWindow && !reg.ends.Before(deadline)
}

// uncovered is owners less those holding a live token of topic from this
// node, in their order: anything a holder could hand out at once it offers
// through that token, after its own parked consumers.
func (r *tokenRegs) uncovered(owners []string, topic string, now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(owners))
	for _, owner := range owners {
		if reg, ok := r.regs[regKey{owner, topic}]; !ok || !now.Before(reg.ends) {
			out = append(out, owner)
		}
	}
	return out
}

// due reports whether the keeper must (re-)send the registration at owner:
// none is live, or it is older than the refresh interval, or it ends
// before until.
func (r *tokenRegs) due(owner, topic string, now, until time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.regs[regKey{owner, topic}]
	return !ok || !now.Before(reg.ends) || now.Sub(reg.sentAt) >= tokenRefreshInterval || reg.ends.Before(until)
}

// begin numbers a registration about to be sent: its ticket for sent.
func (r *tokenRegs) begin() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sends++
	return r.sends
}

// sent records regs, sent to owner at now under ticket, unless a
// notification from owner spent the token after the send began.
func (r *tokenRegs) sent(owner string, regs []ports.TokenRegistration, now time.Time, ticket uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, reg := range regs {
		k := regKey{owner, reg.Topic}
		if sp, ok := r.spentAt[k]; ok && sp.sends >= ticket {
			continue
		}
		r.regs[k] = tokenReg{sentAt: now, ends: now.Add(reg.TTL)}
	}
}

// spent forgets the registration at owner: its notification, at now, used
// it.
func (r *tokenRegs) spent(owner, topic string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := regKey{owner, topic}
	delete(r.regs, k)
	r.spentAt[k] = spending{at: now, sends: r.sends}
}

func (r *tokenRegs) refuse(owner string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused[owner] = until
}

// polled reports whether owner refused registrations recently.
func (r *tokenRegs) polled(owner string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused.active(owner, now)
}

// prune forgets registrations that ended, spendings older than
// tokenSpentMemory and pushes taken longer than pushTakenMemory ago.
func (r *tokenRegs) prune(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, reg := range r.regs {
		if !now.Before(reg.ends) {
			delete(r.regs, k)
		}
	}
	for k, sp := range r.spentAt {
		if now.Sub(sp.at) > tokenSpentMemory {
			delete(r.spentAt, k)
		}
	}
	for k, at := range r.pushed {
		if now.Sub(at) > pushTakenMemory {
			delete(r.pushed, k)
		}
	}
}

// leaveTokens makes sure every owner holds a token of topic from this node
// lasting the consumer's remaining wait left, sharing a fresh registration
// or sending one (the owners in parallel). It reports whether all of them
// do: otherwise the consumer keeps probing at the polling pace.
func (s *Service) leaveTokens(ctx context.Context, topic string, owners []string, left time.Duration) bool {
	if s.tokenPeers == nil || len(owners) == 0 || !s.callable() {
		return false
	}
	now := s.clock.Now()
	deadline := now.Add(left)
	reg := []ports.TokenRegistration{{Topic: topic, TTL: left + tokenTTLGrace}}
	var all atomic.Bool
	all.Store(true)
	var wg sync.WaitGroup
	for _, owner := range owners {
		switch {
		case s.regs.polled(owner, now):
			all.Store(false)
		case !s.regs.shareable(owner, topic, now, deadline):
			wg.Go(func() {
				if !s.register(ctx, owner, reg) {
					all.Store(false)
				}
			})
		}
	}
	wg.Wait()
	return all.Load()
}

// register sends regs to owner under the token budget and records them; a
// refusal of the operation (an older owner) makes owner polled for a while.
func (s *Service) register(ctx context.Context, owner string, regs []ports.TokenRegistration) bool {
	ctx, cancel := context.WithTimeout(ctx, tokenRPCTimeout)
	defer cancel()
	now, ticket := s.clock.Now(), s.regs.begin()
	err := s.tokenPeers.RegisterTokens(ctx, owner, s.self, regs)
	switch {
	case errors.Is(err, domain.ErrNotImplemented):
		s.regs.refuse(owner, now.Add(legacyPeerMemory))
		s.log.Info("partition owner takes no delivery tokens; consumers poll it", "node", owner)
		return false
	case err != nil:
		return false
	}
	s.regs.sent(owner, regs, now, ticket)
	return true
}

// callable reports whether other nodes can call this one back: its member
// record carries a node-RPC address.
func (s *Service) callable() bool {
	ms, err := s.cluster.Members()
	if err != nil {
		return false
	}
	for _, m := range ms {
		if m.ID == s.self {
			return m.ClusterAddr != ""
		}
	}
	return false
}

// Notified is the requesting side of TokenNotify (op 31): owner from holds
// a record of topic for this node. The registration there is spent; one
// consumer parked on topic for other owners' records is woken to claim it.
// false is a pass: no such consumer is parked here.
func (s *Service) Notified(from, topic string) bool {
	s.regs.spent(from, topic, s.clock.Now())
	return s.pump.handClaim(topic, from)
}

// claim asks owner for the record it notified about (a consume with the
// Claim flag, which retires the owner's hold at once), shaped as the
// consumer's probes are. An empty or failed claim returns nothing.
func (s *Service) claim(ctx context.Context, owner string, r ports.RemoteConsume) ([]domain.Delivery, error) {
	r.LocalOnly, r.Claim, r.Wait = true, true, 0
	ds, err := s.forwardConsume(ctx, owner, r)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return ds, nil
}

// keepTokens runs the keeper until ctx ends: every 500 ms, each live owner
// of a topic with routed consumers parked here must hold a token from this
// node lasting as long as the longest of their waits, re-sent at least
// every 5 s; each owner gets its topics in one TokenRegister.
func (s *Service) keepTokens(ctx context.Context) {
	if s.tokenPeers == nil {
		return
	}
	tick := time.NewTicker(tokenKeeperInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.regs.prune(s.clock.Now())
		if !s.callable() {
			continue
		}
		var wg sync.WaitGroup
		for owner, regs := range s.dueRegistrations() {
			wg.Go(func() { s.register(ctx, owner, regs) })
		}
		wg.Wait()
	}
}

// dueRegistrations lists, per owner, the registrations the keeper must send.
func (s *Service) dueRegistrations() map[string][]ports.TokenRegistration {
	now := s.clock.Now()
	out := map[string][]ports.TokenRegistration{}
	for topic, until := range s.pump.routedUntil() {
		t, err := s.topic(topic)
		if err != nil {
			continue
		}
		owners, _, err := s.remoteOwners(t)
		if err != nil {
			continue
		}
		ttl := until.Sub(now) + tokenTTLGrace
		if ttl <= tokenTTLGrace {
			continue
		}
		for _, owner := range owners {
			if !s.regs.polled(owner, now) && s.regs.due(owner, topic, now, until) {
				out[owner] = append(out[owner], ports.TokenRegistration{Topic: topic, TTL: ttl})
			}
		}
	}
	return out
}

// deadlines maps keys to the moment each stops counting.
type deadlines map[string]time.Time

// active reports whether key's deadline is still ahead at now, forgetting
// a passed one.
func (d deadlines) active(key string, now time.Time) bool {
	until, ok := d[key]
	if ok && !now.Before(until) {
		delete(d, key)
		return false
	}
	return ok
}

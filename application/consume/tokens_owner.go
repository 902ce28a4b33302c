package consume

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Delivery tokens, the owner's side (internals.md §5.5). Another node whose
// consumers found nothing here leaves a token per topic; a token takes
// nothing out of circulation, it only asks for one call back. When records
// are available beyond those already promised, the pump spends one token
// per record by notifying its node (TokenNotify) and holds the record back
// until that node's claim arrives (a consume with the Claim flag), the
// node passes, or the hold's deadline passes. Tokens are single use and
// live for the TTL their node sent; nothing about them is persisted.

// tokenBook holds the tokens other nodes left here and the holds of
// notifications sent and not yet claimed. Safe for concurrent use.
type tokenBook struct {
	mu     sync.Mutex
	topics map[string]*topicTokens
	// holding counts live holds of every topic: the consume path's one
	// atomic load while no notification is outstanding.
	holding atomic.Int64
	// pending is set while some topic holds tokens or holds, so a record
	// coming back (nack, expiry) wakes the pump for them.
	pending atomic.Bool
	// names mirrors the keys of topics (written under mu) for has, which
	// runs on every commit while pending is set.
	names sync.Map
	// unpushed is the nodes that refused a push (an older release), each
	// notified instead until then.
	unpushed deadlines
}

// topicTokens is one topic's tokens, one live per requesting node, oldest
// first, and its holds.
type topicTokens struct {
	fifo   []*token
	live   map[string]*token // requesting node -> its token
	marked int               // replaced entries still in fifo
	holds  []time.Time       // deadlines, oldest first
}

type token struct {
	node    string
	expires time.Time
	dead    bool // replaced by a newer registration of its node
}

func newTokenBook() *tokenBook {
	return &tokenBook{topics: map[string]*topicTokens{}, unpushed: deadlines{}}
}

func (b *tokenBook) topicLocked(topic string) *topicTokens {
	tt, ok := b.topics[topic]
	if !ok {
		tt = &topicTokens{live: map[string]*token{}}
		b.topics[topic] = tt
		b.names.Store(topic, struct{}{})
	}
	return tt
}

// register leaves node's token for topic, replacing its earlier one in
// place (marked, swept once marked entries outnumber live ones).
func (b *tokenBook) register(node, topic string, ttl time.Duration, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tt := b.topicLocked(topic)
	if old := tt.live[node]; old != nil {
		old.dead = true
		tt.marked++
	}
	tk := &token{node: node, expires: now.Add(min(ttl, tokenTTLMax))}
	tt.fifo = append(tt.fifo, tk)
	tt.live[node] = tk
	b.pending.Store(true)
	if tt.marked > len(tt.live) {
		tt.sweep()
	}
}

// sweep drops replaced entries from the FIFO.
func (tt *topicTokens) sweep() {
	keep := tt.fifo[:0]
	for _, tk := range tt.fifo {
		if !tk.dead {
			keep = append(keep, tk)
		}
	}
	clear(tt.fifo[len(keep):])
	tt.fifo, tt.marked = keep, 0
}

// expire marks the tokens past their TTL like replaced ones.
func (tt *topicTokens) expire(now time.Time) {
	for node, tk := range tt.live {
		if !now.Before(tk.expires) {
			tk.dead = true
			tt.marked++
			delete(tt.live, node)
		}
	}
	if tt.marked > len(tt.live) {
		tt.sweep()
	}
}

// take spends the oldest live token of topic: its node and expiry,
// ok=false when none is left (expired ones are dropped on the way).
func (b *tokenBook) take(topic string, now time.Time) (token, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tt, ok := b.topics[topic]
	if !ok {
		return token{}, false
	}
	for len(tt.fifo) > 0 {
		tk := tt.fifo[0]
		tt.fifo[0] = nil
		tt.fifo = tt.fifo[1:]
		if tk.dead {
			tt.marked--
			continue
		}
		if tt.live[tk.node] == tk {
			delete(tt.live, tk.node)
		}
		if now.Before(tk.expires) {
			return token{node: tk.node, expires: tk.expires}, true
		}
	}
	return token{}, false
}

// hold records a notification awaiting its claim until deadline.
func (b *tokenBook) hold(topic string, deadline time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tt := b.topicLocked(topic)
	tt.holds = append(tt.holds, deadline)
	b.holding.Add(1)
}

// retire ends topic's oldest hold: its claim arrived or its node passed.
func (b *tokenBook) retire(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tt, ok := b.topics[topic]; ok && len(tt.holds) > 0 {
		tt.holds = tt.holds[1:]
		b.holding.Add(-1)
	}
}

// held is topic's live holds, dropping those past their deadline.
func (b *tokenBook) held(topic string, now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	tt, ok := b.topics[topic]
	if !ok {
		return 0
	}
	b.holding.Add(-int64(tt.lapse(now)))
	return len(tt.holds)
}

// lapse drops the holds past their deadline and says how many.
func (tt *topicTokens) lapse(now time.Time) int {
	n := 0
	for n < len(tt.holds) && !now.Before(tt.holds[n]) {
		n++
	}
	tt.holds = tt.holds[n:]
	return n
}

// offerable lists the topics holding live tokens or holds, dropping
// expired tokens and lapsed holds, and forgetting topics left with neither.
func (b *tokenBook) offerable(now time.Time) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.topics))
	for name, tt := range b.topics {
		if b.tidyLocked(name, tt, now) {
			out = append(out, name)
		}
	}
	b.pending.Store(len(b.topics) > 0)
	return out
}

// among is offerable for the topics of named only (a pump round that
// looks at what was named): the others keep their expired tokens and
// lapsed holds until a round that looks at everything.
func (b *tokenBook) among(named []string, now time.Time) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, name := range named {
		if tt, ok := b.topics[name]; ok && b.tidyLocked(name, tt, now) {
			out = append(out, name)
		}
	}
	b.pending.Store(len(b.topics) > 0)
	return out
}

// tidyLocked drops tt's expired tokens and lapsed holds, forgets the topic
// when it is left with neither, and reports whether it still has some.
func (b *tokenBook) tidyLocked(name string, tt *topicTokens, now time.Time) bool {
	tt.expire(now)
	b.holding.Add(-int64(tt.lapse(now)))
	if len(tt.live) > 0 || len(tt.holds) > 0 {
		return true
	}
	delete(b.topics, name)
	b.names.Delete(name)
	return false
}

// has reports, without the lock, whether topic holds tokens or holds.
func (b *tokenBook) has(topic string) bool {
	_, ok := b.names.Load(topic)
	return ok
}

// wakeAt is the earliest hold deadline (zero when none): a hold that lapses
// frees its record for the next token or a local consumer.
func (b *tokenBook) wakeAt() time.Time {
	if b.holding.Load() == 0 {
		return time.Time{} // holds are made on the pump's goroutine, the caller's
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var at time.Time
	for _, tt := range b.topics {
		if len(tt.holds) > 0 && (at.IsZero() || tt.holds[0].Before(at)) {
			at = tt.holds[0]
		}
	}
	return at
}

// drop forgets a topic's tokens and holds (the topic is gone).
func (b *tokenBook) drop(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tt, ok := b.topics[topic]; ok {
		b.holding.Add(-int64(len(tt.holds)))
		delete(b.topics, topic)
		b.names.Delete(topic)
	}
}

// AcceptTokens is the owner's side of TokenRegister (op 30): node from
// leaves one token per registration, each replacing its earlier one for
// that topic; the pump looks at once, in case records arrived meanwhile.
func (s *Service) AcceptTokens(from string, regs []ports.TokenRegistration) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if from == "" || from == s.self {
		return domain.Refuse(domain.ErrInvalidArgument, "a token needs another node to call back")
	}
	now := s.clock.Now()
	for _, r := range regs {
		if r.Topic == "" || r.TTL <= 0 {
			return domain.Refuse(domain.ErrInvalidArgument, "a token needs a topic and a positive ttl")
		}
		s.tokens.register(from, r.Topic, r.TTL, now)
	}
	for _, r := range regs {
		s.pump.name(r.Topic)
	}
	return nil
}

// offerTokens spends one token per record available beyond the holds
// already out, on the topics of named that hold tokens, or with all on
// every topic that does (the pump calls it after serving its own parked
// consumers, so they come first). Only a round with all looks at, and
// tidies, the tokens of topics nobody named.
func (s *Service) offerTokens(ctx context.Context, named []string, all bool) {
	if s.tokenPeers == nil {
		return
	}
	var names []string
	if all {
		names = s.tokens.offerable(s.clock.Now())
	} else {
		names = s.tokens.among(named, s.clock.Now())
	}
	for _, name := range names {
		t, err := s.topic(name)
		if errors.Is(err, domain.ErrTopicNotFound) {
			s.tokens.drop(name)
			continue
		}
		if err != nil {
			continue
		}
		now := s.clock.Now()
		for n := s.deliverable(ctx, t) - s.tokens.held(name, now); n > 0; n-- {
			tk, ok := s.tokens.take(name, now)
			if !ok || !s.spend(ctx, t, tk, now) {
				break
			}
		}
	}
}

// notify tells node a record of topic is held for it, off the pump's
// goroutine. A pass or a failed call retires the hold at once, and the
// pump offers the record to the next token.
func (s *Service) notify(ctx context.Context, node, topic string) {
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(ctx, tokenRPCTimeout)
		defer cancel()
		claimed, err := s.tokenPeers.NotifyToken(ctx, node, s.self, topic)
		if err == nil && claimed {
			return
		}
		if err != nil && ctx.Err() == nil {
			s.log.Debug("delivery token notification failed", "node", node, "topic", topic, "err", err)
		}
		s.tokens.retire(topic)
		s.pump.name(topic)
	})
}

// deliverable estimates the records t's local partitions could hand out
// now: each partition's high watermark less its settled prefix, leased and
// acked-ahead offsets (a partition without a shard yet is recovered from
// its files first).
func (s *Service) deliverable(ctx context.Context, t meta.Topic) int {
	parts, err := s.localPartitions(t)
	if err != nil {
		return 0
	}
	n := 0
	for _, p := range parts {
		if ctx.Err() != nil {
			return n
		}
		ref := refOf(t, p)
		b, err := s.logs.Bounds(ref)
		if err != nil {
			continue
		}
		sh, err := s.shard(ref, capsOf(t))
		if err != nil {
			continue
		}
		sh.mu.Lock()
		if !sh.gone {
			sh.l.SetCaps(capsOf(t))
			sh.l.SetBackoff(backoffOf(t))
			n += sh.l.Deliverable(b.HighWatermark, b.Oldest)
		}
		sh.mu.Unlock()
	}
	return n
}

// unheld bounds what a consume other than a claim may take from t's local
// partitions while notifications are out: the records beyond the holds.
// It costs one atomic load when no hold is out anywhere.
func (s *Service) unheld(ctx context.Context, t meta.Topic, max int) int {
	if s.tokens.holding.Load() == 0 {
		return max
	}
	h := s.tokens.held(t.Name, s.clock.Now())
	if h == 0 {
		return max
	}
	return min(max, s.deliverable(ctx, t)-h)
}

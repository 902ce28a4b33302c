package consume

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/narad/narad/domain"
)

// run is the pump loop. Each round it takes the topics named since the
// last one (a commit, a lease coming back, a consumer or a token
// arriving), serves their parked consumers and offers what is left to
// other nodes' delivery tokens; then it sleeps until the next name. It
// looks at every waiting topic on its first round and after a metadata
// change; when its timer fires, at the topics that had no local partition
// and at every topic's tokens (a hold may have run out). The logs' change
// notifier is registered before the first look, and a name taken before a
// look is one the look covers, so no commit is missed (story F36); a
// round costs what the named topics cost, however many other topics have
// consumers parked.
func (p *pump) run(ctx context.Context) {
	stop := p.svc.logs.OnChange(p.wake)
	defer stop()
	first, fired := true, false
	for {
		named := p.takeNamed()
		everything := p.everything.Swap(false) || first
		switch {
		case everything:
			clear(p.routeless)
			named = p.topicNames()
		case fired:
			for topic := range p.routeless {
				named = append(named, topic)
			}
		}
		p.serve(named)
		p.svc.offerTokens(ctx, named, everything || fired)
		var ok bool
		if fired, ok = p.sleep(ctx); !ok {
			return
		}
		first = false
	}
}

// name records that topic may have records for its waiters or tokens and
// kicks the pump.
func (p *pump) name(topic string) {
	p.namedMu.Lock()
	p.named[topic] = struct{}{}
	p.namedMu.Unlock()
	p.poke()
}

// lookAtEverything makes the pump's next round look at every waiting
// topic: a metadata change may have moved partitions or changed limits.
func (p *pump) lookAtEverything() {
	p.everything.Store(true)
	p.poke()
}

// takeNamed returns the topics named since the last call, in a buffer the
// next call reuses (the pump goroutine's own).
func (p *pump) takeNamed() []string {
	p.namedMu.Lock()
	defer p.namedMu.Unlock()
	p.looking = p.looking[:0]
	for topic := range p.named {
		p.looking = append(p.looking, topic)
	}
	clear(p.named)
	return p.looking
}

// serve offers records to the parked consumers of names, pinned FIFOs
// first. It keeps routeless up to date for them: a topic with parked
// consumers and no local partition yet (or not the one a pinned consumer
// waits for), or whose metadata could not be read, is looked at again
// after routeCheckInterval. (A placement also sends the pump through every
// topic once the metadata watch applies it; the re-check is the backstop
// for a watch that is not running or a read that failed.)
func (p *pump) serve(names []string) {
	for _, name := range names {
		delete(p.routeless, name)
		if _, ok := p.waiting.Load(name); !ok {
			continue // named for its tokens only
		}
		t, err := p.svc.topic(name)
		if errors.Is(err, domain.ErrTopicNotFound) {
			p.dropWhere(name, func(*waiter) bool { return true })
			continue
		}
		if err != nil {
			p.routeless[name] = struct{}{}
			continue
		}
		id := domain.TopicID(t.ID)
		p.dropWhere(name, func(w *waiter) bool { return w.id != id })
		pinned := p.pinnedParts(name)
		if parts, err := p.svc.localPartitions(t); err != nil || len(parts) == 0 || !containsAll(parts, pinned) {
			p.routeless[name] = struct{}{}
		}
		for _, part := range pinned {
			p.serveFIFO(t, true, part)
		}
		p.serveFIFO(t, false, 0)
	}
}

func (p *pump) topicNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.queues))
	for name := range p.queues {
		names = append(names, name)
	}
	return names
}

// sleep blocks until a kick, the route re-check (while a waiting topic has
// no local partition), the first delivery-token hold deadline or ctx's
// end. fired reports the timer; ok is false when ctx ended.
func (p *pump) sleep(ctx context.Context) (fired, ok bool) {
	wait := time.Duration(-1)
	if len(p.routeless) > 0 {
		wait = routeCheckInterval
	}
	if at := p.svc.tokens.wakeAt(); !at.IsZero() {
		lapse := max(at.Sub(p.svc.clock.Now()), time.Millisecond)
		if wait < 0 || lapse < wait {
			wait = lapse
		}
	}
	var alarm <-chan time.Time
	if wait >= 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		alarm = timer.C
	}
	select {
	case <-ctx.Done():
		return false, false
	case <-p.kick:
		return false, true
	case <-alarm:
		return true, true
	}
}

func containsAll(set, want []int32) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

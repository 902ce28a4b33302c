package consume

import (
	"context"
	"reflect"
	"slices"
	"time"

	"github.com/narad/narad/domain/meta"
)

// run is the pump loop: fetch the wake-ups, serve its own parked
// consumers, offer what is left to other nodes' delivery tokens, then
// sleep on the wake-ups.
func (p *pump) run(ctx context.Context) {
	for {
		cases, routeless := p.watch()
		p.serve()
		p.svc.offerTokens(ctx)
		if !p.sleep(ctx, cases, routeless) {
			return
		}
	}
}

// watch fetches the commit wake-up of every local partition of every topic
// with parked consumers or delivery tokens, before the pump looks for
// records. routeless is set when some topic with parked consumers has no
// local partition yet.
func (p *pump) watch() ([]reflect.SelectCase, bool) {
	var cases []reflect.SelectCase
	routeless := false
	watched := map[string]bool{}
	for _, name := range p.topicNames() {
		watched[name] = true
		t, err := p.svc.topic(name)
		if err != nil {
			continue
		}
		parts, err := p.svc.localPartitions(t)
		if err != nil || len(parts) == 0 {
			routeless = true
			continue
		}
		if !containsAll(parts, p.pinnedParts(name)) {
			routeless = true // a pinned consumer waits for its partition to be placed here
		}
		cases = p.changed(cases, t, parts)
	}
	for _, name := range p.svc.tokens.offerable(p.svc.clock.Now()) {
		if watched[name] {
			continue
		}
		if t, parts, err := p.local(name); err == nil {
			cases = p.changed(cases, t, parts)
		}
	}
	return cases, routeless
}

// local reads a topic and the partitions this node owns of it.
func (p *pump) local(name string) (meta.Topic, []int32, error) {
	t, err := p.svc.topic(name)
	if err != nil {
		return t, nil, err
	}
	parts, err := p.svc.localPartitions(t)
	return t, parts, err
}

// changed appends the commit wake-ups of t's partitions parts.
func (p *pump) changed(cases []reflect.SelectCase, t meta.Topic, parts []int32) []reflect.SelectCase {
	for _, part := range parts {
		if ch, err := p.svc.logs.Changed(refOf(t, part)); err == nil {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
		}
	}
	return cases
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

// sleep blocks until a kick, a commit wake-up, the route re-check (while a
// waiting topic has no local partition), the first delivery-token hold
// deadline or ctx's end; false on the latter.
func (p *pump) sleep(ctx context.Context, cases []reflect.SelectCase, routeless bool) bool {
	fixed := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.kick)},
	}
	wait := time.Duration(-1)
	if routeless {
		wait = routeCheckInterval
	}
	if at := p.svc.tokens.wakeAt(); !at.IsZero() {
		lapse := max(at.Sub(p.svc.clock.Now()), time.Millisecond)
		if wait < 0 || lapse < wait {
			wait = lapse
		}
	}
	if wait >= 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		fixed = append(fixed, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)})
	}
	chosen, _, _ := reflect.Select(append(fixed, cases...))
	return chosen != 0
}

func containsAll(set, want []int32) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

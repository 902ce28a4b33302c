package consume

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Waiter states: parked in a FIFO, served by the pump, or abandoned by its
// consumer. Only the CAS from parked decides who owns the outcome.
const (
	waiterParked int32 = iota
	waiterServed
	waiterAbandoned
)

// waiter is one long-polling consume parked for one record.
type waiter struct {
	ctx   context.Context
	topic string
	id    domain.TopicID
	sc    scope
	state atomic.Int32
	reply chan answer // buffered: the pump never blocks on it
}

type answer struct {
	ds  []domain.Delivery
	err error
}

// waitQueue is one topic's parked consumers: pinned FIFOs per partition,
// served first, then the shared FIFO (internals.md §5.4).
type waitQueue struct {
	shared []*waiter
	pinned map[int32][]*waiter
}

// pump is the node's single goroutine that hands records to parked
// consumers. It wakes on a consumer arriving, on a lease coming back (nack,
// expiry, freed slot) and on a commit to a partition of a topic with parked
// consumers; it fetches the commit wake-ups before it looks, so none is
// lost (story F36). It reserves only for a consumer it already dequeued.
type pump struct {
	svc    *Service
	mu     sync.Mutex
	queues map[string]*waitQueue
	parked atomic.Int64
	kick   chan struct{}
}

func newPump(s *Service) *pump {
	return &pump{svc: s, queues: map[string]*waitQueue{}, kick: make(chan struct{}, 1)}
}

// wake tells the pump a topic may have records again; it costs one atomic
// load when nobody is parked.
func (p *pump) wake(string) {
	if p.parked.Load() > 0 {
		p.poke()
	}
}

func (p *pump) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// waitForOne parks the consumer until the pump hands it one record, the
// wait ends or ctx is cancelled. A record handed over at the instant the
// consumer gives up is released at once when ctx was cancelled, and
// returned when only the wait ran out.
func (s *Service) waitForOne(ctx context.Context, t meta.Topic, sc scope, wait time.Duration) ([]domain.Delivery, error) {
	w := &waiter{ctx: ctx, topic: t.Name, id: domain.TopicID(t.ID), sc: sc, reply: make(chan answer, 1)}
	s.pump.join(w)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-w.reply:
		return a.ds, a.err
	case <-timer.C:
	case <-ctx.Done():
	}
	if !w.state.CompareAndSwap(waiterParked, waiterAbandoned) {
		a := <-w.reply // served at this very instant
		if ctx.Err() != nil {
			s.release(a.ds, "")
			return nil, ctx.Err()
		}
		return a.ds, a.err
	}
	s.pump.remove(w)
	return nil, ctx.Err()
}

func (p *pump) join(w *waiter) {
	p.mu.Lock()
	q := p.queueLocked(w.topic)
	if w.sc.pinned {
		q.pinned[w.sc.partition] = append(q.pinned[w.sc.partition], w)
	} else {
		q.shared = append(q.shared, w)
	}
	p.parked.Add(1)
	p.mu.Unlock()
	p.poke()
}

func (p *pump) queueLocked(topic string) *waitQueue {
	q, ok := p.queues[topic]
	if !ok {
		q = &waitQueue{pinned: map[int32][]*waiter{}}
		p.queues[topic] = q
	}
	return q
}

// remove takes an abandoned waiter out of its FIFO, if still there.
func (p *pump) remove(w *waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.queues[w.topic]
	if !ok {
		return
	}
	if w.sc.pinned {
		q.pinned[w.sc.partition] = p.without(q.pinned[w.sc.partition], w)
	} else {
		q.shared = p.without(q.shared, w)
	}
	p.pruneLocked(w.topic, q)
}

func (p *pump) without(fifo []*waiter, w *waiter) []*waiter {
	for i, x := range fifo {
		if x == w {
			p.parked.Add(-1)
			return append(fifo[:i], fifo[i+1:]...)
		}
	}
	return fifo
}

func (p *pump) pruneLocked(topic string, q *waitQueue) {
	for part, fifo := range q.pinned {
		if len(fifo) == 0 {
			delete(q.pinned, part)
		}
	}
	if len(q.shared) == 0 && len(q.pinned) == 0 {
		delete(p.queues, topic)
	}
}

// pop dequeues the head of a FIFO (pinned when part >= 0), skipping
// abandoned waiters.
func (p *pump) pop(topic string, pinned bool, part int32) *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.queues[topic]
	if !ok {
		return nil
	}
	defer p.pruneLocked(topic, q)
	for {
		fifo := q.shared
		if pinned {
			fifo = q.pinned[part]
		}
		if len(fifo) == 0 {
			return nil
		}
		w := fifo[0]
		fifo = fifo[1:]
		if pinned {
			q.pinned[part] = fifo
		} else {
			q.shared = fifo
		}
		if w.state.Load() == waiterParked {
			return w // still counted as parked until handed its answer
		}
		p.parked.Add(-1)
	}
}

// pushFront puts an unserved waiter back at the head of its FIFO.
func (p *pump) pushFront(w *waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queueLocked(w.topic)
	if w.sc.pinned {
		q.pinned[w.sc.partition] = append([]*waiter{w}, q.pinned[w.sc.partition]...)
	} else {
		q.shared = append([]*waiter{w}, q.shared...)
	}
}

// hand gives a dequeued waiter its answer, or releases the records when
// the waiter gave up meanwhile (cancelled at hand-over).
func (p *pump) hand(w *waiter, a answer) {
	p.parked.Add(-1)
	if w.state.CompareAndSwap(waiterParked, waiterServed) {
		w.reply <- a
		return
	}
	p.svc.release(a.ds, "")
}

// dropTopic answers every consumer parked on a topic incarnation with
// nothing: the topic was deleted.
func (p *pump) dropTopic(topic string, id domain.TopicID) {
	p.dropWhere(topic, func(w *waiter) bool { return w.id == id })
}

// dropWhere answers with nothing every consumer parked on topic that gone
// selects.
func (p *pump) dropWhere(topic string, gone func(*waiter) bool) {
	p.mu.Lock()
	var dropped []*waiter
	if q, ok := p.queues[topic]; ok {
		keep := func(fifo []*waiter) []*waiter {
			out := fifo[:0]
			for _, w := range fifo {
				if gone(w) {
					dropped = append(dropped, w) // hand uncounts it
				} else {
					out = append(out, w)
				}
			}
			return out
		}
		q.shared = keep(q.shared)
		for part, fifo := range q.pinned {
			q.pinned[part] = keep(fifo)
		}
		p.pruneLocked(topic, q)
	}
	p.mu.Unlock()
	for _, w := range dropped {
		p.hand(w, answer{})
	}
}

// serve gives every parked consumer that can be served its record: pinned
// FIFOs first, then the shared one, each until its head finds nothing.
func (p *pump) serve() {
	for _, name := range p.topicNames() {
		t, err := p.svc.topic(name)
		if err != nil {
			if errors.Is(err, domain.ErrTopicNotFound) {
				p.dropWhere(name, func(*waiter) bool { return true })
			}
			continue
		}
		id := domain.TopicID(t.ID)
		p.dropWhere(name, func(w *waiter) bool { return w.id != id })
		for _, part := range p.pinnedParts(name) {
			p.serveFIFO(t, true, part)
		}
		p.serveFIFO(t, false, 0)
	}
}

func (p *pump) pinnedParts(topic string) []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	q, ok := p.queues[topic]
	if !ok {
		return nil
	}
	parts := make([]int32, 0, len(q.pinned))
	for part := range q.pinned {
		parts = append(parts, part)
	}
	return parts
}

// serveFIFO serves one FIFO's waiters in order; a head that finds nothing
// goes back and ends the round (those behind it want the same records).
func (p *pump) serveFIFO(t meta.Topic, pinned bool, part int32) {
	for {
		w := p.pop(t.Name, pinned, part)
		if w == nil {
			return
		}
		ds, err := p.svc.pass(w.ctx, t, w.sc, 1, batchScanBytesMax)
		if len(ds) == 0 && err == nil {
			p.pushFront(w)
			return
		}
		p.hand(w, answer{ds: ds, err: err})
	}
}

// run is the pump loop: fetch the wake-ups, serve, then sleep on them.
func (p *pump) run(ctx context.Context) {
	for {
		cases, routeless := p.watch()
		p.serve()
		if !p.sleep(ctx, cases, routeless) {
			return
		}
	}
}

// watch fetches the commit wake-up of every local partition of every topic
// with parked consumers, before the pump looks for records. routeless is
// set when some such topic has no local partition yet.
func (p *pump) watch() ([]reflect.SelectCase, bool) {
	var cases []reflect.SelectCase
	routeless := false
	for _, name := range p.topicNames() {
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
		for _, part := range parts {
			if ch, err := p.svc.logs.Changed(refOf(t, part)); err == nil {
				cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
			}
		}
	}
	return cases, routeless
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
// waiting topic has no local partition) or ctx's end; false on the latter.
func (p *pump) sleep(ctx context.Context, cases []reflect.SelectCase, routeless bool) bool {
	fixed := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.kick)},
	}
	if routeless {
		timer := time.NewTimer(routeCheckInterval)
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

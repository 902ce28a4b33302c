package consume

import (
	"context"
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
	// routed marks a consumer that also waits for other owners' records
	// (delivery tokens): a notification may wake it to claim one. until is
	// when its whole wait ends, on the service clock.
	routed bool
	until  time.Time
	state  atomic.Int32
	reply  chan answer // buffered: the pump never blocks on it
}

// answer is what wakes a parked consumer: its records (or error), or for a
// routed one the owner whose notification it must claim.
type answer struct {
	ds    []domain.Delivery
	err   error
	claim string
	// from is the owner that pushed ds (reserved there, not here).
	from string
}

// waitQueue is one topic's parked consumers: pinned FIFOs per partition,
// served first, then the shared FIFO (internals.md §5.4).
type waitQueue struct {
	shared []*waiter
	pinned map[int32][]*waiter
}

// pump is the node's single goroutine that hands records to parked
// consumers. It wakes on a consumer arriving, on a lease coming back (nack,
// expiry, freed slot) and on a change of a partition of a topic with
// parked consumers or delivery tokens (the logs' change notifier calls
// wake once the records are readable); each wake fills a one-slot kick,
// so a change made while the pump looks sends it round again and none is
// lost (story F36). It reserves only for the parked consumer at the head
// of a FIFO, and gives the records back if that consumer left (or was woken
// by a delivery-token notification) before it could take them.
type pump struct {
	svc    *Service
	mu     sync.Mutex
	queues map[string]*waitQueue
	// waiting mirrors the names in queues (written under mu) for wake,
	// which must not take mu: it runs on every commit.
	waiting sync.Map
	parked  atomic.Int64
	kick    chan struct{}

	// named holds the topics to look at next round (pump_loop.go);
	// everything asks for a round over every waiting topic.
	namedMu    sync.Mutex
	named      map[string]struct{}
	everything atomic.Bool
	// The pump goroutine's own: the buffer takeNamed fills, and the
	// waiting topics that had no local partition at their last look.
	looking   []string
	routeless map[string]struct{}
}

func newPump(s *Service) *pump {
	return &pump{
		svc: s, queues: map[string]*waitQueue{}, kick: make(chan struct{}, 1),
		named: map[string]struct{}{}, routeless: map[string]struct{}{},
	}
}

// wake tells the pump a topic may have records again. It costs two atomic
// loads when nobody is parked and no delivery token is held, and two map
// lookups more when some are, for this topic or another.
func (p *pump) wake(topic string) {
	if p.parked.Load() == 0 && !p.svc.tokens.pending.Load() {
		return
	}
	if _, ok := p.waiting.Load(topic); ok || p.svc.tokens.has(topic) {
		p.name(topic)
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
	a, err := s.await(ctx, w, wait)
	return a.ds, err
}

// await waits for a parked waiter's answer until wait passes or ctx ends;
// see waitForOne. A notification handed over as a routed consumer is
// cancelled goes to the next parked consumer.
func (s *Service) await(ctx context.Context, w *waiter, wait time.Duration) (answer, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-w.reply:
		return a, a.err
	case <-timer.C:
	case <-ctx.Done():
	}
	if !w.state.CompareAndSwap(waiterParked, waiterAbandoned) {
		a := <-w.reply // served at this very instant
		if ctx.Err() != nil {
			s.handBack(w.topic, a)
			return answer{}, ctx.Err()
		}
		return a, a.err
	}
	s.pump.remove(w)
	return answer{}, ctx.Err()
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
	p.name(w.topic)
}

func (p *pump) queueLocked(topic string) *waitQueue {
	q, ok := p.queues[topic]
	if !ok {
		q = &waitQueue{pinned: map[int32][]*waiter{}}
		p.queues[topic] = q
		p.waiting.Store(topic, struct{}{})
	}
	return q
}

// remove takes an abandoned waiter out of its FIFO, if still there.
func (p *pump) remove(w *waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unqueueLocked(w)
}

// unqueueLocked takes w out of its FIFO, if still there.
func (p *pump) unqueueLocked(w *waiter) {
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
		p.waiting.Delete(topic)
	}
}

// head returns the first waiter of a FIFO (pinned when pinned is set)
// still parked, dropping abandoned ones; it stays in the FIFO until take.
func (p *pump) head(topic string, pinned bool, part int32) *waiter {
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
		if w.state.Load() == waiterParked {
			return w
		}
		if pinned {
			q.pinned[part] = fifo[1:]
		} else {
			q.shared = fifo[1:]
		}
		p.parked.Add(-1)
	}
}

// take claims w for an answer from the pump and takes it out of its FIFO;
// false when it is no longer parked (abandoned, or woken to claim a
// notified record), and then nothing changes.
func (p *pump) take(w *waiter) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.takeLocked(w)
}

func (p *pump) takeLocked(w *waiter) bool {
	if !w.state.CompareAndSwap(waiterParked, waiterServed) {
		return false
	}
	p.unqueueLocked(w)
	return true
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
// stays and ends the round (those behind it want the same records). The
// head stays in its FIFO while the pump looks for its record, so a
// notification arriving meanwhile still finds it; whichever takes it
// first answers it, and records found for a waiter taken by the other go
// back.
func (p *pump) serveFIFO(t meta.Topic, pinned bool, part int32) {
	for {
		w := p.head(t.Name, pinned, part)
		if w == nil {
			return
		}
		ds, err := p.svc.pass(w.ctx, t, w.sc, 1, batchScanBytesMax)
		if len(ds) == 0 && err == nil {
			return
		}
		if !p.take(w) {
			p.svc.release(ds, "")
			continue
		}
		w.reply <- answer{ds: ds, err: err}
	}
}

package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
)

// The ack lane (internals.md §5.9): per owner, a window of ack RPCs in
// flight. Below it every record leaves at once (one record as its single
// op, a caller's group as one AckBatch); when the window is full records
// queue, and each freed slot sends the queue's head as one RPC of up to 64
// records of one topic. An owner that refuses AckBatch as an unknown op
// gets its records back as single ops, and only single ops for 2 min.

// ackSender sends one RPC of the lane to node: one item as its single op,
// more as one AckBatch. It answers one outcome per item, or err for all of
// them.
type ackSender func(ctx context.Context, node, topic string, items []ackItem) (errs []error, err error)

// ackRecord is one forwarded ack, extend or nack on its way to its owner.
// Every field but ctx, topic and item is guarded by ackRouter.mu; err may
// be read without it once done is closed.
type ackRecord struct {
	ctx      context.Context // the caller's, under the 2 s budget
	topic    string
	item     ackItem
	flight   *ackFlight // the RPC carrying it; nil while queued
	answered bool
	err      error
	done     chan struct{} // closed when answered
}

func newAckRecord(ctx context.Context, topic string, item ackItem) *ackRecord {
	return &ackRecord{ctx: ctx, topic: topic, item: item, done: make(chan struct{})}
}

// ackFlight is one RPC of the lane in flight.
type ackFlight struct {
	cancel  context.CancelFunc
	waiting int // its records whose callers still wait; the RPC ends at 0
}

// ackLane is one owner's window and queue.
type ackLane struct {
	queue       []*ackRecord
	inFlight    int
	singleUntil time.Time // the owner refused AckBatch: single ops until then
}

// ackRouter keeps one ackLane per owner with records queued or in flight
// (or remembered as an older release). Safe for concurrent use.
type ackRouter struct {
	window int              // ack RPCs in flight per owner
	now    func() time.Time // dates the legacy-peer memory
	send   ackSender

	mu    sync.Mutex
	lanes map[string]*ackLane
}

// withAckWindow sets the ack lane's window per owner (tests: a window of a
// few calls instead of 128).
func withAckWindow(n int) PeersOption {
	return func(p *Peers) { p.acks.window = n }
}

// withClock sets the clock of the legacy-peer memories: the ack lane's
// and CommitBatches'.
func withClock(now func() time.Time) PeersOption {
	return func(p *Peers) { p.acks.now, p.groups.now = now, now }
}

func newAckRouter(send ackSender) *ackRouter {
	return &ackRouter{window: ackWindow(runtime.GOMAXPROCS(0)), now: time.Now, send: send, lanes: map[string]*ackLane{}}
}

// ackWindow is the window per owner on procs processors: max(128, 8 × procs).
func ackWindow(procs int) int {
	return max(ackWindowMin, ackWindowPerProc*procs)
}

// settle queues recs (all under ctx) on node's lane, starts what the
// window allows, and returns once every record is answered: by its RPC, or
// with ctx's error when ctx ends first. A record still queued then is
// removed and never sent (domain.ErrNotSent); one in flight is abandoned
// (domain.ErrNoAnswer), and its RPC cancelled once no record of it has a
// caller left. A lone record that finds the lane idle enough (nothing
// queued, room in the window) flies on the caller's goroutine under its
// own context: the RPC it would get anyway, without a goroutine to start
// and to wake the caller from (a forwarded ack's usual case below
// saturation).
func (r *ackRouter) settle(ctx context.Context, node string, recs []*ackRecord) {
	r.mu.Lock()
	l := r.lanes[node]
	if l == nil {
		l = &ackLane{}
		r.lanes[node] = l
	}
	if len(recs) == 1 && len(l.queue) == 0 && l.inFlight < r.window && ctx.Err() == nil {
		f := &ackFlight{cancel: func() {}, waiting: 1}
		recs[0].flight = f
		l.inFlight++
		r.mu.Unlock()
		r.fly(ctx, node, l, f, recs)
		return
	}
	l.queue = append(l.queue, recs...)
	r.pump(node, l)
	r.mu.Unlock()
	for _, rec := range recs {
		select {
		case <-rec.done:
		case <-ctx.Done():
			r.abandon(ctx, node, recs)
			return
		}
	}
}

// abandon answers recs not answered yet with ctx's error.
func (r *ackRouter) abandon(ctx context.Context, node string, recs []*ackRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.lanes[node]
	for _, rec := range recs {
		if rec.answered {
			continue
		}
		sent := rec.flight != nil
		if sent {
			if rec.flight.waiting--; rec.flight.waiting == 0 {
				rec.flight.cancel()
			}
		} else if l != nil {
			l.queue = slices.DeleteFunc(l.queue, func(q *ackRecord) bool { return q == rec })
		}
		r.answer(rec, fmt.Errorf("quicpeer: forwarded settle to %s: %w", node, transportClass(classify(ctx, nil), sent)))
	}
	if l != nil {
		r.retire(node, l)
	}
}

// pump starts RPCs from l's queue while the window has room. Called with
// r.mu held.
func (r *ackRouter) pump(node string, l *ackLane) {
	for l.inFlight < r.window {
		recs := r.take(l)
		if len(recs) == 0 {
			return
		}
		deadline := time.Time{}
		for _, rec := range recs {
			if d, _ := rec.ctx.Deadline(); d.After(deadline) {
				deadline = d
			}
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		f := &ackFlight{cancel: cancel, waiting: len(recs)}
		for _, rec := range recs {
			rec.flight = f
		}
		l.inFlight++
		go r.fly(ctx, node, l, f, recs)
	}
}

// take removes the next RPC's records from l's queue: the head and the
// records behind it of the head's topic, up to 64 (one while the owner
// gets single ops). A record whose caller already gave up is answered
// with its context's error instead (never sent). Called with r.mu held.
func (r *ackRouter) take(l *ackLane) []*ackRecord {
	limit := ackBatchSendMaxCount
	if r.now().Before(l.singleUntil) {
		limit = 1
	}
	var recs []*ackRecord
	topic := ""
	l.queue = slices.DeleteFunc(l.queue, func(rec *ackRecord) bool {
		switch {
		case rec.ctx.Err() != nil:
			r.answer(rec, fmt.Errorf("quicpeer: forwarded settle: %w", transportClass(classify(rec.ctx, nil), false)))
			return true
		case len(recs) == limit || (len(recs) > 0 && rec.topic != topic):
			return false
		}
		topic = rec.topic
		recs = append(recs, rec)
		return true
	})
	return recs
}

// fly runs one RPC of l and answers its records; a batch the owner does
// not know goes back to the queue's front for single ops, and the owner
// gets single ops for legacyPeerMemory.
func (r *ackRouter) fly(ctx context.Context, node string, l *ackLane, f *ackFlight, recs []*ackRecord) {
	defer f.cancel()
	items := make([]ackItem, len(recs))
	for i, rec := range recs {
		items[i] = rec.item
	}
	errs, err := r.send(ctx, node, recs[0].topic, items)
	r.mu.Lock()
	defer r.mu.Unlock()
	l.inFlight--
	if len(recs) > 1 && errors.Is(err, ErrUnsupportedOp) {
		l.singleUntil = r.now().Add(legacyPeerMemory)
		r.requeue(l, recs)
	} else {
		for i, rec := range recs {
			if err == nil {
				r.answer(rec, errs[i])
			} else {
				r.answer(rec, err)
			}
		}
	}
	r.pump(node, l)
	r.retire(node, l)
}

// requeue puts recs whose callers still wait back at the front of l's
// queue, in order, to leave on their remaining budget.
func (r *ackRouter) requeue(l *ackLane, recs []*ackRecord) {
	back := make([]*ackRecord, 0, len(recs)+len(l.queue))
	for _, rec := range recs {
		if !rec.answered {
			rec.flight = nil
			back = append(back, rec)
		}
	}
	l.queue = append(back, l.queue...)
}

// answer settles rec once; later answers are ignored.
func (r *ackRouter) answer(rec *ackRecord, err error) {
	if rec.answered {
		return
	}
	rec.answered, rec.err = true, err
	close(rec.done)
}

// retire forgets an idle lane that remembers nothing.
func (r *ackRouter) retire(node string, l *ackLane) {
	if l.inFlight == 0 && len(l.queue) == 0 && !r.now().Before(l.singleUntil) && r.lanes[node] == l {
		delete(r.lanes, node)
	}
}

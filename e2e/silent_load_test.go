package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// timedLoad is a steady produce and consume load on a cluster, timing every
// id: when its first produce attempt left and when its first delivery came
// back. Producers retry each batch through the next of their nodes until a
// 202, which alone counts as accepted (in the ledger); each consumer
// long-polls one partition through one node (its owner, so that no consume
// is forwarded) and acks through it.
type timedLoad struct {
	t       *testing.T
	topic   string
	clients []*httpclient.Client
	l       *ledger
	batch   int
	pace    time.Duration // least time between one producer's batches

	mu     sync.Mutex
	sentAt map[string]time.Time // first produce attempt of each id
	gotAt  map[string]time.Time // first delivery of each id

	next     atomic.Int64
	accepted atomic.Int64
	failures tally

	ctx                      context.Context
	cancel                   context.CancelFunc
	stopProduce, stopConsume chan struct{}
	producers, consumers     sync.WaitGroup
}

// newTimedLoad prepares a load on topic; clients are made for every node,
// by node index.
func newTimedLoad(t *testing.T, nodes []*node, topic string, batch int, pace time.Duration) *timedLoad {
	t.Helper()
	ld := &timedLoad{t: t, topic: topic, l: newLedger(), batch: batch, pace: pace,
		sentAt: map[string]time.Time{}, gotAt: map[string]time.Time{},
		stopProduce: make(chan struct{}), stopConsume: make(chan struct{}), failures: tally{m: map[string]int{}}}
	for _, n := range nodes {
		c, err := httpclient.New(httpclient.Options{Servers: []string{n.url}, ClientName: "narad-e2e", Timeout: workloadRequestTimeout})
		if err != nil {
			t.Fatal(err)
		}
		ld.clients = append(ld.clients, c)
	}
	ld.ctx, ld.cancel = context.WithCancel(context.Background())
	t.Cleanup(ld.stop)
	return ld
}

// startProducers runs producers homed on the given node indexes; a
// failed batch is retried through the next of them.
func (ld *timedLoad) startProducers(via ...int) {
	for i := range via {
		ld.producers.Add(1)
		go ld.produce(i, via)
	}
}

// startConsumer runs a consumer of partition p through node at.
func (ld *timedLoad) startConsumer(at, p int) {
	ld.consumers.Add(1)
	go ld.consume(at, p)
}

// stopProducing ends the producers and waits for them (idempotent).
func (ld *timedLoad) stopProducing() {
	select {
	case <-ld.stopProduce:
	default:
		close(ld.stopProduce)
	}
	ld.producers.Wait()
}

// stop ends every client at once and waits for them (idempotent).
func (ld *timedLoad) stop() {
	ld.stopProducing()
	select {
	case <-ld.stopConsume:
	default:
		close(ld.stopConsume)
	}
	ld.cancel()
	ld.consumers.Wait()
}

// produce sends batches of fresh ids, worker through via[worker] first.
func (ld *timedLoad) produce(worker int, via []int) {
	defer ld.producers.Done()
	r := rand.New(rand.NewPCG(uint64(worker), 15))
	var sent time.Time
	for {
		select {
		case <-ld.stopProduce:
			return
		case <-time.After(time.Until(sent.Add(ld.pace))):
		}
		sent = time.Now()
		start := int(ld.next.Add(int64(ld.batch))) - ld.batch
		msgs := make([]httpclient.BatchMessage, 0, ld.batch)
		ld.mu.Lock()
		for i := start; i < start+ld.batch; i++ {
			id := fmt.Sprintf("%s-%06d", ld.topic, i)
			ld.sentAt[id] = sent
			msgs = append(msgs, httpclient.BatchMessage{Key: []byte(id), Payload: payloadFor(r, i)})
		}
		ld.mu.Unlock()
		if !ld.send(worker, via, msgs) {
			return
		}
		for _, m := range msgs {
			ld.l.accept(string(m.Key), m.Payload)
		}
		ld.accepted.Add(int64(len(msgs)))
	}
}

// send produces msgs until a 202, through via[from], then the next node of
// via after each failure; false once producing stopped.
func (ld *timedLoad) send(from int, via []int, msgs []httpclient.BatchMessage) bool {
	pause := retryPauseMin
	for k := 0; ; k++ {
		at := via[(from+k)%len(via)]
		_, err := ld.clients[at].ProduceBatch(ld.ctx, ld.topic, msgs)
		if err == nil {
			return true
		}
		ld.fail("produce", at, err)
		select {
		case <-ld.stopProduce:
			return false
		case <-time.After(backoff(err, pause)):
		}
		pause = min(2*pause, retryPauseMax)
	}
}

// consume long-polls partition p through node home and acks there.
func (ld *timedLoad) consume(home, p int) {
	defer ld.consumers.Done()
	pause := retryPauseMin
	for {
		select {
		case <-ld.stopConsume:
			return
		default:
		}
		res, err := ld.clients[home].Consume(ld.ctx, ld.topic, httpclient.ConsumeOptions{Max: consumeBatchMax, Wait: consumeWait, Partition: &p})
		if err != nil {
			ld.fail("consume", home, err)
			select {
			case <-ld.stopConsume:
				return
			case <-time.After(backoff(err, pause)):
			}
			pause = min(2*pause, retryPauseMax)
			continue
		}
		pause = retryPauseMin
		now := time.Now()
		handles := make([]string, 0, len(res.Messages))
		ld.mu.Lock()
		for _, m := range res.Messages {
			if _, seen := ld.gotAt[string(m.Key)]; !seen {
				ld.gotAt[string(m.Key)] = now
			}
		}
		ld.mu.Unlock()
		for _, m := range res.Messages {
			ld.l.deliver(m)
			handles = append(handles, m.ReceiptHandle)
		}
		ld.ack(home, handles)
	}
}

// ack settles handles through node at, retrying 502/503 results a bounded
// number of times; a lease left unacked only comes back (a duplicate).
func (ld *timedLoad) ack(at int, handles []string) {
	for attempt := 0; attempt < ackAttemptsMax && len(handles) > 0; attempt++ {
		results, err := ld.clients[at].AckBatch(ld.ctx, ld.topic, handles, httpclient.OpAck)
		if err != nil {
			ld.fail("ack", at, err)
			return
		}
		var again []string
		for i, r := range results {
			if r.Status == 502 || r.Status == 503 {
				again = append(again, handles[i])
			}
		}
		handles = again
	}
}

func (ld *timedLoad) fail(op string, at int, err error) {
	if ld.ctx.Err() != nil {
		return
	}
	kind := "transport"
	if s := httpclient.StatusOf(err); s != 0 {
		kind = fmt.Sprint(s)
	}
	ld.failures.addErr(fmt.Sprintf("%s %s via n%d", op, kind, at+1), err)
}

// delivered counts the ids delivered at least once.
func (ld *timedLoad) delivered() int {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return len(ld.gotAt)
}

// waitUntil polls cond until it holds, failing the test after within.
func (ld *timedLoad) waitUntil(what string, within time.Duration, cond func() bool) {
	ld.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			accepted, missing := ld.l.counts()
			ld.t.Fatalf("%s: not within %s (%d accepted, %d undelivered, e.g. %v); failures: %s",
				what, within, accepted, missing, first(lost(ld.l)), ld.failures.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the load, bounded by the deadline
	}
}

// latencies summarises produce-to-consume latency of the ids whose first
// produce attempt left in [from, to): how many there were, how many are
// delivered, the 50th and 99th percentiles and the maximum over the
// delivered ones, and how many of them took longer than late.
type latencies struct {
	ids, delivered int
	p50, p99, max  time.Duration
	late           time.Duration
	over           int
}

func (l latencies) String() string {
	return fmt.Sprintf("%d ids, %d delivered, p50 %s, p99 %s, max %s, %d over %s", l.ids, l.delivered,
		l.p50.Round(time.Millisecond), l.p99.Round(time.Millisecond), l.max.Round(time.Millisecond), l.over, l.late)
}

func (ld *timedLoad) latencies(from, to time.Time, late time.Duration) latencies {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	out := latencies{late: late}
	var ds []time.Duration
	for id, s := range ld.sentAt {
		if s.Before(from) || !s.Before(to) {
			continue
		}
		out.ids++
		if g, ok := ld.gotAt[id]; ok {
			ds = append(ds, g.Sub(s))
			if g.Sub(s) > late {
				out.over++
			}
		}
	}
	out.delivered = len(ds)
	if len(ds) == 0 {
		return out
	}
	slices.Sort(ds)
	rank := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	out.p50, out.p99, out.max = rank(0.50), rank(0.99), ds[len(ds)-1]
	return out
}

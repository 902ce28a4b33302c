package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// Client behaviour of the failure workloads (api.md §3.4).
const (
	// workloadRequestTimeout bounds one request (a consume adds its wait).
	workloadRequestTimeout = 10 * time.Second
	// retryPauseMin doubles after each failure up to retryPauseMax; a
	// Retry-After longer than the pause is honoured.
	retryPauseMin = 50 * time.Millisecond
	retryPauseMax = time.Second
	// ackAttemptsMax bounds the retries of 502/503 ack results; a lease
	// left unacked comes back after the topic's visibility timeout.
	ackAttemptsMax = 8
	// consumeBatchMax and consumeWait shape every consume.
	consumeBatchMax = 100
	consumeWait     = time.Second
)

// workload drives one topic of a cluster the way well-behaved clients
// would: producers send batches of messages keyed by unique ids and retry
// every failure (through the next node) until a 202, which alone counts as
// accepted; consumers long-poll a batch from their node, record every
// delivery in the ledger and ack through the next node, retrying the
// handles answered 502 or 503. Every failure is tallied by operation, node
// and status.
type workload struct {
	t       *testing.T
	topic   string
	nodes   []*node
	clients []*httpclient.Client // one per node, by node index
	l       *ledger
	total   int // ids the producers hand out at most
	batch   int
	// pace, when set, is the least time between one producer's batches,
	// so a scenario's load lasts through its failure and recovery.
	pace time.Duration
	next atomic.Int64 // next id to hand out
	// accepted counts ids answered 202.
	accepted atomic.Int64
	failures tally

	ctx                      context.Context
	cancel                   context.CancelFunc
	stopProduce, stopConsume chan struct{}
	producers, consumers     sync.WaitGroup
	// produced closes once every producer returned.
	produced chan struct{}
}

// newWorkload prepares total messages for topic over nodes.
func newWorkload(t *testing.T, nodes []*node, topic string, total, batch int) *workload {
	t.Helper()
	w := &workload{t: t, topic: topic, nodes: nodes, l: newLedger(), total: total, batch: batch,
		stopProduce: make(chan struct{}), stopConsume: make(chan struct{}), produced: make(chan struct{}), failures: tally{m: map[string]int{}}}
	for _, n := range nodes {
		c, err := httpclient.New(httpclient.Options{Servers: []string{n.url}, ClientName: "narad-e2e", Timeout: workloadRequestTimeout})
		if err != nil {
			t.Fatal(err)
		}
		w.clients = append(w.clients, c)
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	t.Cleanup(w.stop)
	return w
}

// start runs one producer per entry of produceVia and one consumer per
// entry of consumeVia, each homed on the node index given.
func (w *workload) start(produceVia, consumeVia []int) {
	for i, home := range produceVia {
		w.producers.Add(1)
		go w.produce(i, home)
	}
	go func() {
		w.producers.Wait()
		close(w.produced)
	}()
	for _, home := range consumeVia {
		w.consumers.Add(1)
		go w.consume(home)
	}
}

// stopProducing ends the producers (idempotent); a batch in flight is not
// retried, and counts only if it got its 202.
func (w *workload) stopProducing() {
	select {
	case <-w.stopProduce:
	default:
		close(w.stopProduce)
	}
}

// stop ends every client at once (idempotent).
func (w *workload) stop() {
	w.stopProducing()
	select {
	case <-w.stopConsume:
	default:
		close(w.stopConsume)
	}
	w.cancel()
	w.producers.Wait()
	w.consumers.Wait()
}

func (w *workload) stopped(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// pause sleeps d unless ch closes first; false when it did.
func (w *workload) pause(ch chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return false
	case <-time.After(d):
		return true
	}
}

// backoff is how long to wait after err, given the current pause.
func backoff(err error, pause time.Duration) time.Duration {
	var ae *httpclient.APIError
	if errors.As(err, &ae) && ae.RetryAfter > pause {
		return min(ae.RetryAfter, 2*retryPauseMax)
	}
	return pause
}

// produce hands out batches of ids until all are taken or produce stops.
func (w *workload) produce(worker, home int) {
	defer w.producers.Done()
	r := rand.New(rand.NewPCG(uint64(worker), uint64(len(w.topic))))
	var sent time.Time
	for {
		if !w.pause(w.stopProduce, time.Until(sent.Add(w.pace))) {
			return
		}
		sent = time.Now()
		start := int(w.next.Add(int64(w.batch))) - w.batch
		if start >= w.total {
			return
		}
		msgs := make([]httpclient.BatchMessage, 0, w.batch)
		for i := start; i < min(start+w.batch, w.total); i++ {
			msgs = append(msgs, httpclient.BatchMessage{Key: []byte(fmt.Sprintf("%s-%06d", w.topic, i)), Payload: payloadFor(r, i)})
		}
		if !w.send(home, msgs) {
			return
		}
		for _, m := range msgs {
			w.l.accept(string(m.Key), m.Payload)
		}
		w.accepted.Add(int64(len(msgs)))
	}
}

// send produces msgs until a 202, moving to the next node after each
// failure; false if produce stopped first or the answer is one no retry
// can change.
func (w *workload) send(home int, msgs []httpclient.BatchMessage) bool {
	pause := retryPauseMin
	for at := home; ; at = (at + 1) % len(w.clients) {
		if w.stopped(w.stopProduce) {
			return false
		}
		_, err := w.clients[at].ProduceBatch(w.ctx, w.topic, msgs)
		if err == nil {
			return true
		}
		w.fail("produce", at, err)
		if s := httpclient.StatusOf(err); s != 0 && s < 500 && s != 421 && s != 429 {
			w.t.Errorf("produce via node %d: %v", at+1, err)
			return false
		}
		if !w.pause(w.stopProduce, backoff(err, pause)) {
			return false
		}
		pause = min(2*pause, retryPauseMax)
	}
}

// consume long-polls batches from home (from the next node while home
// does not answer at all), records them and acks them through the node
// after the one that served them.
func (w *workload) consume(home int) {
	defer w.consumers.Done()
	pause := retryPauseMin
	at := home
	for !w.stopped(w.stopConsume) {
		res, err := w.clients[at].Consume(w.ctx, w.topic, httpclient.ConsumeOptions{Max: consumeBatchMax, Wait: consumeWait})
		if err != nil {
			w.fail("consume", at, err)
			if s := httpclient.StatusOf(err); s != 0 && s < 500 && s != 421 && s != 429 {
				w.t.Errorf("consume via node %d: %v", at+1, err)
				return
			}
			if !w.pause(w.stopConsume, backoff(err, pause)) {
				return
			}
			pause = min(2*pause, retryPauseMax)
			if httpclient.StatusOf(err) == 0 {
				at = (at + 1) % len(w.clients) // the node is gone: use another
			}
			continue
		}
		pause = retryPauseMin
		handles := make([]string, 0, len(res.Messages))
		for _, m := range res.Messages {
			w.l.deliver(m)
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			w.ack((at+1)%len(w.clients), handles)
		}
		at = home
	}
}

// ack settles handles through node at, retrying the 502/503 results (and
// whole-request failures through the next node) a bounded number of times.
func (w *workload) ack(at int, handles []string) {
	pause := retryPauseMin
	for attempt := 0; attempt < ackAttemptsMax && len(handles) > 0; attempt++ {
		if attempt > 0 && !w.pause(w.stopConsume, pause) {
			return
		}
		pause = min(2*pause, retryPauseMax)
		results, err := w.clients[at].AckBatch(w.ctx, w.topic, handles, httpclient.OpAck)
		if err != nil {
			w.fail("ack", at, err)
			at = (at + 1) % len(w.clients)
			continue
		}
		var again []string
		for i, r := range results {
			switch r.Status {
			case 204:
			case 410: // the lease lapsed (it comes back) or a retried ack had landed
				w.failures.add(fmt.Sprintf("ack result 410 via n%d", at+1))
			case 502, 503:
				w.failures.add(fmt.Sprintf("ack result %d via n%d", r.Status, at+1))
				again = append(again, handles[i])
			default:
				w.t.Errorf("ack of %s via node %d: %d %s", handles[i], at+1, r.Status, r.Error)
			}
		}
		handles = again
	}
	if len(handles) > 0 {
		w.failures.add("ack abandoned (lease lapses)")
	}
}

// fail tallies err under op and node.
func (w *workload) fail(op string, at int, err error) {
	kind := "transport"
	if s := httpclient.StatusOf(err); s != 0 {
		kind = fmt.Sprint(s)
	} else if w.ctx.Err() != nil {
		return // the workload is stopping
	}
	w.failures.addErr(fmt.Sprintf("%s %s via n%d", op, kind, at+1), err)
}

// waitAccepted waits until at least n ids got a 202.
func (w *workload) waitAccepted(n int, within time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for w.accepted.Load() < int64(n) {
		if time.Now().After(deadline) {
			w.t.Fatalf("only %d of %d accepted within %s; failures: %s", w.accepted.Load(), n, within, w.failures.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the workload, bounded by the deadline
	}
}

// waitDelivered waits until the consumers received at least n messages
// (duplicates included).
func (w *workload) waitDelivered(n int, within time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for w.l.deliveries() < n {
		if time.Now().After(deadline) {
			w.t.Fatalf("only %d of %d deliveries within %s; failures: %s", w.l.deliveries(), n, within, w.failures.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the workload, bounded by the deadline
	}
}

// finish waits for the producers to end (every id handed out, or
// stopProducing) and every accepted id to be delivered, and stops the
// clients.
func (w *workload) finish(within time.Duration) {
	w.t.Helper()
	deadline := time.Now().Add(within)
	for !w.stopped(w.produced) || !w.l.complete() {
		if w.t.Failed() {
			w.stop()
			w.t.FailNow()
		}
		if time.Now().After(deadline) {
			accepted, missing := w.l.counts()
			w.stop()
			w.t.Fatalf("after %s: %d accepted (producers done: %v), %d of them never delivered (e.g. %v); failures: %s",
				within, accepted, w.stopped(w.produced), missing, first(lost(w.l)), w.failures.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the workload, bounded by the deadline
	}
	w.stop()
}

func lost(l *ledger) []string {
	ids, _ := l.report()
	return ids
}

// verify fails the test on any accepted id never delivered or delivered
// with other bytes, logs the ledger's numbers under name and returns the
// duplicate count.
func (w *workload) verify(name string) (duplicates int) {
	w.t.Helper()
	ids, dups := w.l.report()
	accepted, _ := w.l.counts()
	w.t.Logf("%s: %d accepted, %d lost, %d duplicates, %d delivered without a 202 seen; client failures: %s\n\t%s",
		name, accepted, len(ids), dups, w.l.unaccepted(), w.failures.String(), w.failures.examples())
	if len(ids) > 0 || len(w.l.mismatch) > 0 {
		w.t.Fatalf("%s: lost %d accepted messages (e.g. %v); %d delivered with other bytes (e.g. %v)",
			name, len(ids), first(ids), len(w.l.mismatch), first(w.l.mismatch))
	}
	return dups
}

// tally counts events by kind, keeping the first error of each kind.
type tally struct {
	mu      sync.Mutex
	m       map[string]int
	example map[string]string
}

func (t *tally) addErr(kind string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[kind]++
	if t.example == nil {
		t.example = map[string]string{}
	}
	if _, ok := t.example[kind]; !ok {
		t.example[kind] = err.Error()
	}
}

// examples lists the first error of each kind.
func (t *tally) examples() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	kinds := make([]string, 0, len(t.example))
	for k, e := range t.example {
		kinds = append(kinds, fmt.Sprintf("%s: %s", k, e))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, "\n\t")
}

func (t *tally) add(kind string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[kind]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) == 0 {
		return "none"
	}
	kinds := make([]string, 0, len(t.m))
	for k, n := range t.m {
		kinds = append(kinds, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(kinds)
	return strings.Join(kinds, ", ")
}

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// Scale of the scheduled-delivery ledger (issue 19).
const (
	scheduleLedgerMessages = 100_000
	scheduleLedgerBatch    = 1000
	scheduleDelayMax       = 60 * time.Second
)

// dueTimes keeps, per message id, the earliest time it may be delivered and
// the lateness of its first delivery.
type dueTimes struct {
	mu    sync.Mutex
	due   map[string]time.Time
	late  []time.Duration
	early []string
}

func (d *dueTimes) delivered(id string, at time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	due, ok := d.due[id]
	if !ok {
		return // a duplicate, already measured
	}
	delete(d.due, id)
	if at.Before(due) {
		d.early = append(d.early, fmt.Sprintf("%s %v early", id, due.Sub(at)))
		return
	}
	d.late = append(d.late, at.Sub(due))
}

// ensure that on a 3-node cluster 100,000 messages produced with random
// delays up to 60 s (half as delay_ms, half as deliver_at_ms, in batches
// through every node) are none delivered before their time and none lost,
// while the owner of a partition and then the metadata leader are killed
// (kill -9) and restarted during the wait; it reports the minimum, p50,
// p99 and maximum lateness of first deliveries.
func TestThreeNodesScheduledLedger(t *testing.T) {
	nodes := startCluster(t, 3)
	clients := []*httpclient.Client{client(t, nodes[0]), client(t, nodes[1]), client(t, nodes[2])}
	ctx := context.Background()
	if _, err := clients[0].CreateTopic(ctx, httpclient.TopicSpec{Name: "sched", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[0], "sched")
	l := newLedger()
	d := &dueTimes{due: map[string]time.Time{}}
	r := rand.New(rand.NewPCG(19, 60))
	began := time.Now()
	for start := 0; start < scheduleLedgerMessages; start += scheduleLedgerBatch {
		sent := time.Now()
		msgs := make([]httpclient.BatchMessage, scheduleLedgerBatch)
		dues := make([]time.Time, scheduleLedgerBatch)
		for i := range msgs {
			delay := time.Duration(r.Int64N(int64(scheduleDelayMax/time.Millisecond)+1)) * time.Millisecond
			m := httpclient.BatchMessage{Key: []byte(fmt.Sprintf("s-%06d", start+i)), Payload: []byte(fmt.Sprintf(`{"n":%d}`, start+i))}
			if i%2 == 0 {
				m.Schedule.Delay, dues[i] = delay, sent.Add(delay).Truncate(time.Millisecond)
			} else {
				m.Schedule.DeliverAt = sent.Add(delay)
				dues[i] = m.Schedule.DeliverAt.Truncate(time.Millisecond)
			}
			msgs[i] = m
		}
		d.mu.Lock()
		for i, m := range msgs {
			d.due[string(m.Key)] = dues[i]
		}
		d.mu.Unlock()
		if _, err := clients[(start/scheduleLedgerBatch)%3].ProduceBatch(ctx, "sched", msgs); err != nil {
			t.Fatalf("batch at %d: %v", start, err)
		}
		for _, m := range msgs {
			l.accept(string(m.Key), m.Payload)
		}
	}
	t.Logf("%d scheduled messages accepted in %s", scheduleLedgerMessages, time.Since(began).Round(time.Millisecond))

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { consumeScheduled(c, l, d, stop) })
	}
	defer func() { close(stop); wg.Wait() }()

	waitUntilTime(began.Add(15 * time.Second))
	owner := ownerIndex(t, clients[0], "sched", 0)
	nodes[owner].kill9()
	nodes[owner].restart()
	t.Logf("owner n%d of sched/0 killed and restarted at %s", owner+1, time.Since(began).Round(time.Millisecond))
	waitUntilTime(began.Add(30 * time.Second))
	leader := leaderIndex(t, nodes, 0, 1, 2)
	nodes[leader].kill9()
	nodes[leader].restart()
	t.Logf("leader n%d killed and restarted at %s", leader+1, time.Since(began).Round(time.Millisecond))

	deadline := began.Add(scheduleDelayMax + 2*time.Minute)
	for !l.complete() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling the ledger, bounded by the deadline
	}
	lost, dups := l.report()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.early) > 0 {
		t.Errorf("%d delivered before their time, e.g. %v", len(d.early), d.early[:min(5, len(d.early))])
	}
	if len(lost) > 0 {
		t.Fatalf("%d accepted messages never delivered, e.g. %v", len(lost), lost[:min(5, len(lost))])
	}
	if len(l.mismatch) > 0 {
		t.Fatalf("payload mismatches: %v", l.mismatch[:min(5, len(l.mismatch))])
	}
	slices.Sort(d.late)
	pct := func(p float64) time.Duration { return d.late[int(p*float64(len(d.late)-1))].Round(time.Millisecond) }
	t.Logf("all %d delivered, none early, %d duplicates; lateness min %s p50 %s p99 %s max %s",
		len(d.late), dups, pct(0), pct(0.5), pct(0.99), pct(1))
}

// consumeScheduled consumes and acks sched through c until stop, recording
// each delivery; a failing node (killed) is retried.
func consumeScheduled(c *httpclient.Client, l *ledger, d *dueTimes, stop <-chan struct{}) {
	ctx := context.Background()
	for {
		select {
		case <-stop:
			return
		default:
		}
		res, err := c.Consume(ctx, "sched", httpclient.ConsumeOptions{Max: 100, Wait: waitPerPoll})
		now := time.Now()
		if err != nil {
			time.Sleep(100 * time.Millisecond) // the node is down: retry after a pause
			continue
		}
		handles := make([]string, 0, len(res.Messages))
		for _, m := range res.Messages {
			d.delivered(string(m.Key), now)
			l.deliver(m)
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			_, _ = c.AckBatch(ctx, "sched", handles, httpclient.OpAck) // a lost ack only redelivers
		}
	}
}

// waitUntilTime sleeps until t.
func waitUntilTime(t time.Time) { time.Sleep(time.Until(t)) }

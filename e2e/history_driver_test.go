package e2e

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The history workload: the failure workload's clients, retry discipline
// and stop channels (workload_test.go), with every request recorded as an
// operation. Producers send batches of unique ids to the parent topic;
// consumers of the parent and of each child long-poll batches and, outside
// the final drain, give each delivery one fate: ack (most), extend then
// ack, nack, drop (the lease lapses), or a late ack once the lease lapsed.
const (
	histBatch      = 10
	histPace       = 100 * time.Millisecond // per producer: 300 messages a second with three
	histCap        = 1_000_000
	histConsumeMax = 25
	// Shares, in percent, of the fates other than a plain ack.
	histExtendPct = 6
	histNackPct   = 6
	histDropPct   = 4
	histLatePct   = 4
	// histLateBy is how long after its lease lapsed a late ack is sent.
	histLateBy = 500 * time.Millisecond
)

// histRecorder collects operations and faults, safe for concurrent use.
type histRecorder struct {
	mu     sync.Mutex
	base   time.Time
	ops    []histOp
	faults []histFault
}

func newHistRecorder() *histRecorder { return &histRecorder{base: time.Now().Round(0)} }

// now reads the wall clock (the nodes' clock, without Go's monotonic
// reading) as nanoseconds since the recorder started.
func (r *histRecorder) now() int64 { return time.Now().Round(0).Sub(r.base).Nanoseconds() }

func (r *histRecorder) add(ops ...histOp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, ops...)
}

func (r *histRecorder) fault(f histFault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults = append(r.faults, f)
}

func (r *histRecorder) snapshot() ([]histOp, []histFault) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]histOp(nil), r.ops...), append([]histFault(nil), r.faults...)
}

// histLease is one delivered copy a consumer holds.
type histLease struct {
	id, path, copy, handle string
	at                     time.Time
}

// histDriver runs the recorded clients over a parent topic (paths[0]) and
// its children, with one ledger per path.
type histDriver struct {
	*workload
	rec        *histRecorder
	paths      []string
	delays     map[string]time.Duration
	ledgers    map[string]*ledger
	visibility time.Duration
	draining   atomic.Bool
	late       chan histLease
	clientIDs  atomic.Int32
	lateNode   atomic.Int32
	checked    atomic.Bool // check ran (and wrote what a failure needs)
}

func newHistDriver(w *workload, paths []string, delays map[string]time.Duration, visibility time.Duration) *histDriver {
	w.pace = histPace
	d := &histDriver{workload: w, rec: newHistRecorder(), paths: paths, delays: delays,
		ledgers: map[string]*ledger{paths[0]: w.l}, visibility: visibility, late: make(chan histLease, 4096)}
	for _, p := range paths[1:] {
		d.ledgers[p] = newLedger()
	}
	w.t.Cleanup(func() {
		if !w.t.Failed() || d.checked.Load() {
			return
		}
		ops, faults := d.rec.snapshot()
		file := filepath.Join(historyArtifacts(w.t), "history.jsonl")
		if err := writeHistory(file, historyRecord{Paths: paths, Delays: delays, Faults: faults}, ops); err != nil {
			w.t.Logf("writing the history: %v", err)
			return
		}
		w.t.Logf("the test failed before its check; the history so far is in %s", file)
	})
	return d
}

// start runs a producer per entry of produceVia and, for every path, a
// consumer per entry of consumeVia, each homed on the node index given.
func (d *histDriver) start(produceVia, consumeVia []int) {
	for _, home := range produceVia {
		d.producers.Add(1)
		go d.produce(home)
	}
	for _, p := range d.paths {
		for _, home := range consumeVia {
			d.consumers.Add(1)
			go d.consume(p, home)
		}
	}
	d.consumers.Add(1)
	go d.settleLate()
}

func (d *histDriver) client() int { return int(d.clientIDs.Add(1)) - 1 }

func (d *histDriver) produce(home int) {
	defer d.producers.Done()
	client := d.client()
	r := rand.New(rand.NewPCG(uint64(home), 77))
	var sent time.Time
	for {
		if !d.pause(d.stopProduce, time.Until(sent.Add(d.pace))) {
			return
		}
		sent = time.Now()
		start := int(d.next.Add(int64(d.batch))) - d.batch
		if start >= d.total {
			return
		}
		msgs := make([]httpclient.BatchMessage, 0, d.batch)
		for i := start; i < min(start+d.batch, d.total); i++ {
			msgs = append(msgs, httpclient.BatchMessage{Key: []byte(fmt.Sprintf("%s-%06d", d.topic, i)), Payload: payloadFor(r, i)})
		}
		if !d.send(client, home, msgs) {
			return
		}
		for _, l := range d.ledgers {
			for _, m := range msgs {
				l.accept(string(m.Key), m.Payload)
			}
		}
		d.accepted.Add(int64(len(msgs)))
	}
}

// send is workload.send with every attempt recorded: produces msgs until a
// 202, through the next node after each failure.
func (d *histDriver) send(client, home int, msgs []httpclient.BatchMessage) bool {
	pause := retryPauseMin
	for at := home; ; at = (at + 1) % len(d.clients) {
		if d.stopped(d.stopProduce) {
			return false
		}
		call := d.rec.now()
		_, err := d.clients[at].ProduceBatch(d.ctx, d.topic, msgs)
		ret := d.rec.now()
		status, out := 202, outcomeOK
		if err != nil {
			status, out = httpclient.StatusOf(err), outcomeAmbiguous
			if status >= 400 && status < 500 {
				out = outcomeRefused // nothing stored (api.md §2.13)
			}
		}
		ops := make([]histOp, len(msgs))
		for i, m := range msgs {
			ops[i] = histOp{Client: client, Kind: kindProduce, ID: string(m.Key), Path: d.topic, Node: at + 1,
				Call: call, Ret: ret, Status: status, Outcome: out, Err: histErrText(err)}
		}
		d.rec.add(ops...)
		if err == nil {
			return true
		}
		d.fail("produce", at, err)
		if out == outcomeRefused && status != 421 && status != 429 {
			d.t.Errorf("produce via node %d: %v", at+1, err)
			return false
		}
		if !d.pause(d.stopProduce, backoff(err, pause)) {
			return false
		}
		pause = min(2*pause, retryPauseMax)
	}
}

func histErrText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// consume long-polls path from home (from the next node while home does
// not answer), records each delivery and settles it through the next node.
func (d *histDriver) consume(path string, home int) {
	defer d.consumers.Done()
	client := d.client()
	r := rand.New(rand.NewPCG(uint64(home), uint64(len(path))))
	pause, at := retryPauseMin, home
	for !d.stopped(d.stopConsume) {
		call := d.rec.now()
		res, err := d.clients[at].Consume(d.ctx, path, httpclient.ConsumeOptions{Max: histConsumeMax, Wait: consumeWait})
		ret := d.rec.now()
		if err != nil {
			d.fail("consume "+path, at, err)
			if s := httpclient.StatusOf(err); s != 0 && s < 500 && s != 421 && s != 429 {
				d.t.Errorf("consume %s via node %d: %v", path, at+1, err)
				return
			}
			if !d.pause(d.stopConsume, backoff(err, pause)) {
				return
			}
			pause = min(2*pause, retryPauseMax)
			if httpclient.StatusOf(err) == 0 {
				at = (at + 1) % len(d.clients)
			}
			continue
		}
		pause = retryPauseMin
		var acks, extends, nacks []histLease
		for _, m := range res.Messages {
			l := histLease{id: string(m.Key), path: path, copy: fmt.Sprintf("%d:%d", m.Partition, m.Offset), handle: m.ReceiptHandle, at: time.Now()}
			d.rec.add(histOp{Client: client, Kind: kindDeliver, ID: l.id, Path: path, Copy: l.copy, Handle: l.handle,
				Node: at + 1, Call: call, Ret: ret, Status: 200, Outcome: outcomeOK})
			if m.Topic != path {
				d.t.Errorf("misroute: consume of %s via node %d delivered %s from topic %q", path, at+1, l.id, m.Topic)
			}
			d.ledgers[path].deliver(m)
			x := r.IntN(100)
			switch {
			case d.draining.Load() || x >= histExtendPct+histNackPct+histDropPct+histLatePct:
				acks = append(acks, l)
			case x < histExtendPct:
				extends = append(extends, l)
			case x < histExtendPct+histNackPct:
				nacks = append(nacks, l)
			case x < histExtendPct+histNackPct+histDropPct:
				// dropped: the lease lapses and the copy comes back
			default:
				select {
				case d.late <- l:
				default:
					acks = append(acks, l)
				}
			}
		}
		via := (at + 1) % len(d.clients)
		acks = append(acks, d.settle(client, via, httpclient.OpExtend, extends)...)
		d.settle(client, via, httpclient.OpAck, acks)
		d.settle(client, via, httpclient.OpNack, nacks)
		at = home
	}
}

// settleLate acks each lease it is handed once the lease has lapsed.
func (d *histDriver) settleLate() {
	defer d.consumers.Done()
	client := d.client()
	for {
		select {
		case <-d.stopConsume:
			return
		case l := <-d.late:
			if !d.pause(d.stopConsume, time.Until(l.at.Add(d.visibility+histLateBy))) {
				return
			}
			d.settle(client, int(d.lateNode.Add(1))%len(d.clients), httpclient.OpAck, []histLease{l})
		}
	}
}

// settle applies op to leases of one path through node at, retrying the
// handles answered 502 or 503 (and whole-request failures, through the
// next node) a bounded number of times, recording every attempt; it
// returns the leases answered 204.
func (d *histDriver) settle(client, at int, op httpclient.AckOp, leases []histLease) (done []histLease) {
	kind := histKind(op.String())
	pause := retryPauseMin
	for attempt := 0; attempt < ackAttemptsMax && len(leases) > 0; attempt++ {
		if attempt > 0 && !d.pause(d.stopConsume, pause) {
			return done
		}
		pause = min(2*pause, retryPauseMax)
		handles := make([]string, len(leases))
		for i, l := range leases {
			handles[i] = l.handle
		}
		call := d.rec.now()
		results, err := d.clients[at].AckBatch(d.ctx, leases[0].path, handles, op)
		ret := d.rec.now()
		record := func(l histLease, status int, out histOutcome, msg string) {
			d.rec.add(histOp{Client: client, Kind: kind, ID: l.id, Path: l.path, Copy: l.copy, Handle: l.handle,
				Node: at + 1, Call: call, Ret: ret, Status: status, Outcome: out, Err: msg})
		}
		if err != nil {
			for _, l := range leases {
				record(l, httpclient.StatusOf(err), outcomeAmbiguous, err.Error())
			}
			d.fail(string(kind), at, err)
			at = (at + 1) % len(d.clients)
			continue
		}
		var again []histLease
		for i, res := range results {
			l := leases[i]
			switch res.Status {
			case 204:
				record(l, res.Status, outcomeOK, "")
				done = append(done, l)
			case 410: // lease gone: lapsed, superseded, or a retried settle had landed
				record(l, res.Status, outcomeRefused, res.Error)
				d.failures.add(fmt.Sprintf("%s result 410", kind))
			case 503: // nothing applied (api.md §2.15)
				record(l, res.Status, outcomeRefused, res.Error)
				d.failures.add(fmt.Sprintf("%s result 503 via n%d", kind, at+1))
				again = append(again, l)
			case 502: // may have been applied
				record(l, res.Status, outcomeAmbiguous, res.Error)
				d.failures.add(fmt.Sprintf("%s result 502 via n%d", kind, at+1))
				again = append(again, l)
			default:
				record(l, res.Status, outcomeAmbiguous, res.Error)
				d.t.Errorf("%s of %s via node %d: %d %s", kind, l.handle, at+1, res.Status, res.Error)
			}
		}
		leases = again
	}
	if len(leases) > 0 {
		d.failures.add(fmt.Sprintf("%s abandoned", kind))
	}
	return done
}

// deliveries counts the deliveries on every path, duplicates included.
func (d *histDriver) deliveries() int {
	n := 0
	for _, l := range d.ledgers {
		n += l.deliveries()
	}
	return n
}

// complete reports whether every accepted id reached every path.
func (d *histDriver) complete() bool {
	for _, l := range d.ledgers {
		if !l.complete() {
			return false
		}
	}
	return true
}

// finish stops the producers, drains (every delivery acked) until every
// accepted id reached every path and then nothing was delivered for one
// visibility timeout and a second, and stops the clients. Running out of
// within is left to the checks to report.
func (d *histDriver) finish(within time.Duration) {
	d.stopProducing()
	d.producers.Wait()
	d.draining.Store(true)
	deadline := time.Now().Add(within)
	for !d.complete() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the clients, bounded by the deadline
	}
	quiet := d.visibility + time.Second
	seen, since := d.deliveries(), time.Now()
	for time.Since(since) < quiet && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling the clients, bounded by the deadline
		if n := d.deliveries(); n != seen {
			seen, since = n, time.Now()
		}
	}
	d.stop()
}

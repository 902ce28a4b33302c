package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// bench is the shared state of one run.
type bench struct {
	e        *env
	cl       *httpclient.Client
	cfg      benchConfig
	run      uint64
	start    time.Time
	led      *ledger
	prodLat  *latencies
	e2eLat   *latencies
	next     atomic.Uint64 // next sequence to hand out; no message of the run has a higher one
	foreign  atomic.Int64
	consErrs atomic.Int64
	ackFails atomic.Int64
	lastAck  atomic.Int64 // Unix ns of the last first delivery settled
	pinTurn  atomic.Uint64
	errOnce  sync.Once
	firstErr string
}

// runBench runs producers (and consumers) to completion and returns the report.
func runBench(e *env, cl *httpclient.Client, cfg benchConfig) (benchReport, error) {
	b := &bench{e: e, cl: cl, cfg: cfg, start: time.Now(), led: newLedger(), prodLat: newLatencies(maxLatencySamples), e2eLat: newLatencies(maxLatencySamples)}
	b.run = uint64(b.start.UnixNano())
	consCtx, stopConsumers := context.WithCancel(e.ctx)
	defer stopConsumers()
	var consumers, producers sync.WaitGroup
	for range cfg.consumers {
		consumers.Go(func() { b.consume(consCtx) })
	}
	for range cfg.producers {
		producers.Go(b.produce)
	}
	stopProgress := b.progress()
	producers.Wait()
	produceEnd := time.Now()
	b.led.producersDone()
	if cfg.consumers > 0 {
		timer := time.NewTimer(cfg.drainTimeout)
		select {
		case <-b.led.drained():
		case <-timer.C:
		case <-e.ctx.Done():
		}
		timer.Stop()
		stopConsumers()
		consumers.Wait()
	}
	stopProgress()
	rep := b.report(produceEnd)
	switch {
	case e.ctx.Err() != nil:
		return rep, fmt.Errorf("bench interrupted")
	case rep.Produced == 0:
		return rep, fmt.Errorf("bench: no message was accepted (%d produce failures; first: %s)", rep.ProduceFailures, rep.FirstProduceError)
	case rep.Consume != nil && rep.Consume.Lost > 0:
		return rep, fmt.Errorf("bench: FAIL: %d accepted message(s) not consumed within the drain timeout (%s)", rep.Consume.Lost, cfg.drainTimeout)
	}
	return rep, nil
}

// claim hands out the next batch of sequences, or ok=false when the run is over.
func (b *bench) claim() (first uint64, n int, ok bool) {
	n = b.cfg.produceBatch
	if b.cfg.duration > 0 {
		if time.Since(b.start) >= b.cfg.duration {
			return 0, 0, false
		}
		return b.next.Add(uint64(n)) - uint64(n), n, true
	}
	first = b.next.Add(uint64(n)) - uint64(n)
	if first >= uint64(b.cfg.count) {
		return 0, 0, false
	}
	return first, min(n, b.cfg.count-int(first)), true
}

// produce is one producer: claim sequences, pace, send, record.
// With --client pinned, single-message produces go over the producer's own
// keep-alive connection to one of the servers (httpclient.Pinned),
// producers spread over the servers in turn; everything else goes through
// the shared client.
func (b *bench) produce() {
	pin := b.pin()
	if pin != nil {
		defer pin.Close()
	}
	for b.e.ctx.Err() == nil {
		first, n, ok := b.claim()
		if !ok {
			return
		}
		if b.cfg.rate > 0 {
			due := b.start.Add(time.Duration(float64(first) / b.cfg.rate * float64(time.Second)))
			if pause(b.e.ctx, time.Until(due)) != nil {
				return
			}
		}
		sent := time.Now()
		msgs := make([]httpclient.BatchMessage, n)
		for i := range msgs {
			seq := first + uint64(i)
			msgs[i].Payload = encodePayload(kindFor(b.cfg.payload, seq), benchID{Run: b.run, Seq: seq}, sent.UnixNano(), b.cfg.size)
		}
		var err error
		switch {
		case pin != nil:
			err = pin.Produce(b.e.ctx, b.cfg.topic, msgs[0].Payload)
		case b.cfg.produceBatch == 1:
			err = b.cl.Produce(b.e.ctx, b.cfg.topic, msgs[0].Payload, "", nil)
		default:
			_, err = b.cl.ProduceBatch(b.e.ctx, b.cfg.topic, msgs)
		}
		b.prodLat.add(time.Since(sent))
		if err != nil {
			b.errOnce.Do(func() { b.firstErr = err.Error() })
		}
		for i := range n {
			b.led.produced(first+uint64(i), err == nil)
		}
	}
}

// pin returns this producer's connection for single-message produces
// under --client pinned, to the next server in turn: like a client behind a
// load balancer, each producer keeps its connection on one node, and the
// producers together cover every server. Nil for --client http and for
// batch produces. (Rotating every producer's requests over all servers
// instead made a fifth to a third fewer messages per second on three nodes
// in six of eight pairs, README.)
func (b *bench) pin() *httpclient.Pinned {
	if b.cfg.client != clientPinned || b.cfg.produceBatch != 1 {
		return nil
	}
	servers := b.cl.Servers()
	p, err := b.cl.Pin(servers[int(b.pinTurn.Add(1)-1)%len(servers)])
	if err != nil {
		return nil // an address the client accepted always pins; fall back anyway
	}
	return p
}

// consume is one consumer: lease, account, ack, until ctx ends.
func (b *bench) consume(ctx context.Context) {
	opts := httpclient.ConsumeOptions{Wait: b.cfg.consumeWait}
	if b.cfg.consumeBatch > 1 {
		opts.Max = b.cfg.consumeBatch
	}
	for ctx.Err() == nil {
		res, err := b.cl.Consume(ctx, b.cfg.topic, opts)
		if err != nil {
			if ctx.Err() == nil {
				b.consErrs.Add(1)
				_ = pause(ctx, b.e.retryBase)
			}
			continue
		}
		received := time.Now()
		b.settle(ctx, res.Messages)
		for _, m := range res.Messages {
			id, sentNs, ok := decodePayload(m.Body)
			if !ok || id.Run != b.run || id.Seq >= b.next.Load() {
				b.foreign.Add(1)
				continue
			}
			if b.led.consumed(id.Seq) {
				b.e2eLat.add(received.Sub(time.Unix(0, sentNs)))
				b.lastAck.Store(time.Now().UnixNano())
			}
		}
	}
}

// settle acks msgs (one batch ack, or one ack each), retrying transient
// failures a few times; what still fails comes back later as a duplicate.
// Acks cut short by the end of the run are not counted as failures.
func (b *bench) settle(ctx context.Context, msgs []httpclient.Message) {
	if len(msgs) == 0 {
		return
	}
	failed := func(n int) {
		if ctx.Err() == nil {
			b.ackFails.Add(int64(n))
		}
	}
	if b.cfg.consumeBatch == 1 {
		for _, m := range msgs {
			if err := b.retry(ctx, func() error { return b.cl.Ack(ctx, b.cfg.topic, m.ReceiptHandle) }); err != nil {
				failed(1)
			}
		}
		return
	}
	pending := make([]string, len(msgs))
	for i, m := range msgs {
		pending[i] = m.ReceiptHandle
	}
	for attempt := 1; len(pending) > 0 && attempt <= 3; attempt++ {
		var results []httpclient.AckResult
		err := b.retry(ctx, func() (err error) {
			results, err = b.cl.AckBatch(ctx, b.cfg.topic, pending, httpclient.OpAck)
			return err
		})
		if err != nil {
			break
		}
		var again []string
		for i, r := range results {
			switch {
			case r.Status == http.StatusBadGateway || r.Status == http.StatusServiceUnavailable:
				again = append(again, pending[i])
			case r.Status != http.StatusNoContent:
				failed(1)
			}
		}
		pending = again
	}
	failed(len(pending))
}

// retry runs fn up to three times while it fails transiently.
func (b *bench) retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = fn(); err == nil || !transient(err) || pause(ctx, b.e.retryBase<<attempt) != nil {
			return err
		}
	}
	return err
}

// progress prints a status line about every e.progressEvery until stopped
// (showProgress).
func (b *bench) progress() (stop func()) {
	return showProgress(b.e, 78, func() string {
		acc, failed, cons := b.led.counts()
		secs := time.Since(b.start).Seconds()
		line := fmt.Sprintf("bench %5.1fs: %d accepted (%.0f msg/s), %d failed", secs, acc, float64(acc)/secs, failed)
		if b.cfg.consumers > 0 {
			line += fmt.Sprintf(", %d consumed", cons)
		}
		return line
	})
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// benchConfig is one bench run's settings.
type benchConfig struct {
	topic        string
	servers      []string
	size         int
	count        int
	duration     time.Duration
	producers    int
	consumers    int
	produceBatch int
	consumeBatch int
	rate         float64
	payload      string
	drainTimeout time.Duration
	consumeWait  time.Duration
	asJSON       bool
}

func (c benchConfig) validate() error {
	switch {
	case c.size < 1, c.producers < 1, c.consumers < 0, c.rate < 0:
		return usagef("--size and --producers must be >= 1, --consumers and --rate >= 0")
	case c.duration == 0 && c.count < 1:
		return usagef("--count must be >= 1 (or give --duration)")
	case c.duration < 0, c.drainTimeout <= 0, c.consumeWait < 0:
		return usagef("--duration, --drain-timeout and --consume-wait must be positive")
	case c.produceBatch < 1 || c.produceBatch > 1000:
		return usagef("--produce-batch must be 1 to 1000")
	case c.consumeBatch < 1 || c.consumeBatch > 100:
		return usagef("--consume-batch must be 1 to 100")
	case !slices.Contains(payloadModes, c.payload):
		return usagef("--payload must be one of %s", strings.Join(payloadModes, ", "))
	}
	return nil
}

func newBenchCmd(e *env, g *globals) *cobra.Command {
	var cfg benchConfig
	var servers string
	c := &cobra.Command{
		Use:   "bench <topic>",
		Short: "Load a topic: produce (and optionally consume and ack), then report rates and latencies",
		Long: "bench produces --count messages (or for --duration) from --producers workers,\n" +
			"spread over --servers: each single-message producer keeps one connection to one\n" +
			"server, producers taking the servers in turn; batch produces, consumes and acks\n" +
			"rotate over them. Each payload carries the run's id, a sequence\n" +
			"number and its send time. With --consumers > 0, consumers run alongside, ack\n" +
			"what they receive and account for every message: bench fails (exit 1) when a\n" +
			"message that was accepted (202) is not consumed within --drain-timeout after\n" +
			"the last produce. Messages of other runs found on the topic are acked and counted\n" +
			"as foreign, so use a topic of its own.",
		Args: exactArgs("topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.topic = args[0]
			if err := cfg.validate(); err != nil {
				return err
			}
			t, err := g.resolve(e)
			if err != nil {
				return err
			}
			if servers != "" {
				t.servers = splitList(servers)
			}
			cl, err := newClient(e, t)
			if err != nil {
				return err
			}
			cfg.servers = cl.Servers()
			rep, err := runBench(e, cl, cfg)
			if perr := printBench(e, cfg, rep); perr != nil {
				return perr
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&servers, "servers", "", "comma-separated node URLs to spread requests over (default: the resolved server)")
	f.IntVar(&cfg.size, "size", 256, "payload size in bytes (at least what the message id needs)")
	f.IntVar(&cfg.count, "count", 10000, "messages to produce")
	f.DurationVar(&cfg.duration, "duration", 0, "produce for this long instead of --count")
	f.IntVar(&cfg.producers, "producers", 8, "concurrent producers")
	f.IntVar(&cfg.consumers, "consumers", 0, "concurrent consumers running alongside the producers (0 = produce only)")
	f.IntVar(&cfg.produceBatch, "produce-batch", 1, "messages per produce request (> 1 uses the batch route)")
	f.IntVar(&cfg.consumeBatch, "consume-batch", 1, "messages per consume (> 1 uses max=N and batch acks)")
	f.Float64Var(&cfg.rate, "rate", 0, "offered load in messages per second, all producers together (0 = unthrottled)")
	f.StringVar(&cfg.payload, "payload", "json", "payload kind: json, text, binary or mixed")
	f.DurationVar(&cfg.drainTimeout, "drain-timeout", 30*time.Second, "how long consumers may take, after the last produce, to receive everything accepted")
	f.DurationVar(&cfg.consumeWait, "consume-wait", 2*time.Second, "long-poll wait of each consume")
	f.BoolVar(&cfg.asJSON, "json", false, "print the report as JSON")
	return c
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

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
// Single-message produces go over the producer's own keep-alive connection
// to one of the servers (httpclient.Pinned), producers spread over the
// servers in turn; batches go through the shared client.
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

// pin returns this producer's connection for single-message produces, to
// the next server in turn: like a client behind a load balancer, each
// producer keeps its connection on one node, and the producers together
// cover every server. Nil for batch produces. (Rotating every producer's
// requests over all servers instead made a fifth to a third fewer messages
// per second on three nodes in six of eight pairs, README.)
func (b *bench) pin() *httpclient.Pinned {
	if b.cfg.produceBatch != 1 {
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

// progress prints a status line about every e.progressEvery until stopped:
// rewritten in place on a terminal, one line each otherwise.
func (b *bench) progress() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(b.e.progressEvery)
		defer t.Stop()
		wrote := false
		for {
			select {
			case <-done:
				if wrote && b.e.stderrTTY {
					fmt.Fprintln(b.e.stderr)
				}
				return
			case <-t.C:
				acc, failed, cons := b.led.counts()
				secs := time.Since(b.start).Seconds()
				line := fmt.Sprintf("bench %5.1fs: %d accepted (%.0f msg/s), %d failed", secs, acc, float64(acc)/secs, failed)
				if b.cfg.consumers > 0 {
					line += fmt.Sprintf(", %d consumed", cons)
				}
				if b.e.stderrTTY {
					fmt.Fprintf(b.e.stderr, "\r%-78s", line)
				} else {
					fmt.Fprintln(b.e.stderr, line)
				}
				wrote = true
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// latencyMs is a latency summary in milliseconds.
type latencyMs struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

func summarize(l *latencies) latencyMs {
	p := l.percentiles(50, 95, 99)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return latencyMs{P50: ms(p[0]), P95: ms(p[1]), P99: ms(p[2])}
}

// benchReport is what a run measured.
type benchReport struct {
	Topic             string              `json:"topic"`
	Servers           []string            `json:"servers"`
	Payload           string              `json:"payload"`
	Size              int                 `json:"size"`
	Producers         int                 `json:"producers"`
	ProduceBatch      int                 `json:"produce_batch"`
	Consumers         int                 `json:"consumers"`
	ConsumeBatch      int                 `json:"consume_batch"`
	Produced          int                 `json:"produced"`
	ProduceFailures   int                 `json:"produce_failures"`
	FirstProduceError string              `json:"first_produce_error,omitempty"`
	ProduceSeconds    float64             `json:"produce_seconds"`
	ProduceRate       float64             `json:"produce_msgs_per_sec"`
	ProduceLatency    latencyMs           `json:"produce_latency_ms"`
	Consume           *benchConsumeReport `json:"consume,omitempty"`
	Result            string              `json:"result"`
}

// benchConsumeReport is the consuming side of a run with consumers.
type benchConsumeReport struct {
	ledgerSummary
	Foreign         int64     `json:"foreign"`
	ConsumeErrors   int64     `json:"consume_errors"`
	AckFailures     int64     `json:"ack_failures"`
	FullFlowSeconds float64   `json:"full_flow_seconds"`
	FullFlowRate    float64   `json:"full_flow_msgs_per_sec"`
	EndToEnd        latencyMs `json:"end_to_end_latency_ms"`
}

func (b *bench) report(produceEnd time.Time) benchReport {
	sum := b.led.summary()
	secs := produceEnd.Sub(b.start).Seconds()
	r := benchReport{
		Topic: b.cfg.topic, Servers: b.cfg.servers, Payload: b.cfg.payload, Size: b.cfg.size,
		Producers: b.cfg.producers, ProduceBatch: b.cfg.produceBatch, Consumers: b.cfg.consumers, ConsumeBatch: b.cfg.consumeBatch,
		Produced: sum.Accepted, ProduceFailures: sum.Failed, FirstProduceError: b.firstErr,
		ProduceSeconds: secs, ProduceRate: rate(sum.Accepted, secs), ProduceLatency: summarize(b.prodLat), Result: "PASS",
	}
	if b.cfg.consumers > 0 {
		c := &benchConsumeReport{ledgerSummary: sum, Foreign: b.foreign.Load(), ConsumeErrors: b.consErrs.Load(), AckFailures: b.ackFails.Load(), EndToEnd: summarize(b.e2eLat)}
		if last := b.lastAck.Load(); last > 0 {
			c.FullFlowSeconds = time.Unix(0, last).Sub(b.start).Seconds()
			c.FullFlowRate = rate(sum.Consumed-sum.Unconfirmed, c.FullFlowSeconds)
		}
		r.Consume = c
		if sum.Lost > 0 {
			r.Result = "FAIL"
		}
	}
	if sum.Accepted == 0 {
		r.Result = "FAIL"
	}
	return r
}

func rate(n int, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(n) / secs
}

func printBench(e *env, cfg benchConfig, r benchReport) error {
	if cfg.asJSON {
		return printJSON(e.stdout, r)
	}
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "topic\t%s on %s\n", r.Topic, strings.Join(r.Servers, ", "))
	fmt.Fprintf(tw, "load\t%s payloads of %d bytes; %d producer(s), batch %d; %d consumer(s), batch %d\n", r.Payload, r.Size, r.Producers, r.ProduceBatch, r.Consumers, r.ConsumeBatch)
	fmt.Fprintf(tw, "produced\t%d accepted, %d failed in %.2fs: %.0f msg/s\n", r.Produced, r.ProduceFailures, r.ProduceSeconds, r.ProduceRate)
	fmt.Fprintf(tw, "produce latency\tp50 %.2fms  p95 %.2fms  p99 %.2fms (per request)\n", r.ProduceLatency.P50, r.ProduceLatency.P95, r.ProduceLatency.P99)
	if r.FirstProduceError != "" {
		fmt.Fprintf(tw, "first failure\t%s\n", r.FirstProduceError)
	}
	if c := r.Consume; c != nil {
		fmt.Fprintf(tw, "consumed\t%d distinct, %d duplicate deliveries, %d lost\n", c.Consumed, c.Duplicates, c.Lost)
		fmt.Fprintf(tw, "full flow\t%d produced, consumed and acked in %.2fs: %.0f msg/s\n", c.Consumed-c.Unconfirmed, c.FullFlowSeconds, c.FullFlowRate)
		fmt.Fprintf(tw, "end-to-end latency\tp50 %.2fms  p99 %.2fms\n", c.EndToEnd.P50, c.EndToEnd.P99)
		fmt.Fprintf(tw, "other\t%d foreign message(s), %d consume error(s), %d ack failure(s), %d delivered despite a failed produce\n", c.Foreign, c.ConsumeErrors, c.AckFailures, c.Unconfirmed)
	}
	fmt.Fprintf(tw, "result\t%s\n", r.Result)
	return tw.Flush()
}

package main

import (
	"fmt"
	"strings"
	"time"
)

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
	Client            string              `json:"client"`
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
	// NodeCPU is the nodes' CPU over the run, when bench read it.
	NodeCPU *benchCPUReport `json:"node_cpu,omitempty"`
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
		Topic: b.cfg.topic, Client: b.cfg.client, Servers: b.cfg.servers, Payload: b.cfg.payload, Size: b.cfg.size,
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

// clientDesc says in the table how requests were sent.
var clientDesc = map[string]string{
	clientHTTP:   "http: net/http with default transport settings for every request",
	clientPinned: "pinned: a kept connection per single-message producer; net/http for the rest",
}

func printBench(e *env, cfg benchConfig, r benchReport) error {
	if cfg.asJSON {
		return printJSON(e.stdout, r)
	}
	tw := newTable(e.stdout)
	fmt.Fprintf(tw, "topic\t%s on %s\n", r.Topic, strings.Join(r.Servers, ", "))
	fmt.Fprintf(tw, "load\t%s payloads of %d bytes; %d producer(s), batch %d; %d consumer(s), batch %d\n", r.Payload, r.Size, r.Producers, r.ProduceBatch, r.Consumers, r.ConsumeBatch)
	fmt.Fprintf(tw, "client\t%s\n", clientDesc[r.Client])
	fmt.Fprintf(tw, "produced\t%d accepted, %d failed in %.2fs: %.0f msg/s\n", r.Produced, r.ProduceFailures, r.ProduceSeconds, r.ProduceRate)
	fmt.Fprintf(tw, "produce latency\tp50 %.2fms  p95 %.2fms  p99 %.2fms (per request)\n", r.ProduceLatency.P50, r.ProduceLatency.P95, r.ProduceLatency.P99)
	if r.FirstProduceError != "" {
		fmt.Fprintf(tw, "first failure\t%s\n", r.FirstProduceError)
	}
	c := r.Consume
	if c != nil {
		fmt.Fprintf(tw, "consumed\t%d distinct, %d duplicate deliveries, %d lost\n", c.Consumed, c.Duplicates, c.Lost)
		fmt.Fprintf(tw, "full flow\t%d produced, consumed and acked in %.2fs: %.0f msg/s\n", c.Consumed-c.Unconfirmed, c.FullFlowSeconds, c.FullFlowRate)
		fmt.Fprintf(tw, "end-to-end latency\tp50 %.2fms  p99 %.2fms\n", c.EndToEnd.P50, c.EndToEnd.P99)
	}
	printCPU(tw, r.NodeCPU)
	if c != nil {
		fmt.Fprintf(tw, "other\t%d foreign message(s), %d consume error(s), %d ack failure(s), %d delivered despite a failed produce\n", c.Foreign, c.ConsumeErrors, c.AckFailures, c.Unconfirmed)
	}
	fmt.Fprintf(tw, "result\t%s\n", r.Result)
	return tw.Flush()
}

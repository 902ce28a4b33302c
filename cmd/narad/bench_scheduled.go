package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

const (
	// scheduledTopic is the topic of `bench --scheduled` when none is named.
	scheduledTopic = "bench-scheduled"
	// scheduledBatch is the messages per batch produce (the server's cap).
	scheduledBatch = 1000
	// scheduledMaxDelay is the furthest delay a topic with the default
	// retention (topic.default_retention_age_ms, 7 days) accepts.
	scheduledMaxDelay = 7 * 24 * time.Hour
)

// scheduledConfig is one `bench --scheduled` run: put count messages in a
// topic's schedule, due after delay, and measure what the nodes spend
// keeping them.
type scheduledConfig struct {
	topic       string
	count       int
	partitions  int
	size        int
	delay       time.Duration
	concurrency int
	settle      time.Duration
	window      time.Duration
	asJSON      bool
}

func (c scheduledConfig) validate() error {
	switch {
	case c.count < 1 || c.partitions < 1 || c.concurrency < 1 || c.size < 1:
		return usagef("--scheduled, --partitions, --producers and --size must be >= 1")
	case c.delay < time.Millisecond || c.delay > scheduledMaxDelay:
		return usagef("--scheduled-delay must be from 1ms to 168h (the default topic retention of 7 days), got %s", c.delay)
	case c.settle < 0 || c.window <= 0:
		return usagef("--settle must be >= 0 and --window > 0")
	}
	return nil
}

// scheduledReport is what a scheduled run prints.
type scheduledReport struct {
	Topic           string  `json:"topic"`
	Created         bool    `json:"created"` // false: the topic existed and was reused
	Scheduled       int     `json:"scheduled"`
	DelaySeconds    float64 `json:"delay_seconds"`
	SetupSeconds    float64 `json:"setup_seconds"` // topic create and every produce
	ProduceRate     float64 `json:"produce_rate"`  // messages per second over the produces
	WindowSeconds   float64 `json:"window_seconds"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	CorePercent     float64 `json:"core_percent"` // CPU seconds per wall second, in % of one core
	RSSBeforeBytes  float64 `json:"rss_before_bytes"`
	RSSAfterBytes   float64 `json:"rss_after_bytes"`
	BytesPerMessage float64 `json:"bytes_per_message"` // RSS growth since before the set-up per scheduled message
	NodesRead       int     `json:"nodes_read"`
}

// runScheduled creates the topic (reusing it if it exists), schedules
// cfg.count messages, waits cfg.settle, then measures the nodes over
// cfg.window.
func runScheduled(e *env, cl *httpclient.Client, targets []metricsTarget, cfg scheduledConfig) (scheduledReport, error) {
	rep := scheduledReport{Topic: cfg.topic, DelaySeconds: cfg.delay.Seconds()}
	before := readNodes(e.ctx, cl, targets)
	if len(before.errs) > 0 {
		return rep, fmt.Errorf("read the nodes before the set-up: %w", before.errs[0])
	}
	start := time.Now()
	_, err := cl.CreateTopic(e.ctx, httpclient.TopicSpec{Name: cfg.topic, Partitions: cfg.partitions})
	if err != nil && httpclient.StatusOf(err) != 409 {
		return rep, fmt.Errorf("create %s: %w", cfg.topic, err)
	}
	rep.Created = err == nil
	produceStart := time.Now()
	n, err := scheduleAll(e, cl, cfg)
	rep.Scheduled, rep.SetupSeconds = n, time.Since(start).Seconds()
	rep.ProduceRate = float64(n) / max(time.Since(produceStart).Seconds(), 1e-9)
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(e.stderr, "narad: %d messages scheduled; settling for %s, then measuring for %s\n", n, cfg.settle, cfg.window)
	w, err := measureWindow(e, cl, targets, cfg.settle, cfg.window)
	if err != nil {
		return rep, err
	}
	rep.NodesRead, rep.WindowSeconds, rep.CPUSeconds, rep.CorePercent = w.nodes, w.seconds, w.cpuSeconds, w.corePercent
	rep.RSSBeforeBytes, rep.RSSAfterBytes = before.rss, w.rss
	rep.BytesPerMessage = (w.rss - before.rss) / float64(n)
	return rep, nil
}

// scheduleAll produces cfg.count messages, each due after cfg.delay, in
// batches of up to scheduledBatch from cfg.concurrency workers, printing
// progress. The first failed batch stops the run and is returned.
func scheduleAll(e *env, cl *httpclient.Client, cfg scheduledConfig) (int, error) {
	var done, next atomic.Int64
	var first atomic.Pointer[error]
	batches := (cfg.count + scheduledBatch - 1) / scheduledBatch
	run := uint64(time.Now().UnixNano())
	stop := everyInterval(idleProgressInterval, func() {
		fmt.Fprintf(e.stderr, "narad: %d/%d scheduled\n", done.Load(), cfg.count)
	})
	var wg sync.WaitGroup
	for range cfg.concurrency {
		wg.Go(func() {
			for first.Load() == nil && e.ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= batches {
					return
				}
				lo, hi := i*scheduledBatch, min((i+1)*scheduledBatch, cfg.count)
				if err := scheduleBatch(e, cl, cfg, run, lo, hi); err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				done.Add(int64(hi - lo))
			}
		})
	}
	wg.Wait()
	stop()
	if p := first.Load(); p != nil {
		return int(done.Load()), *p
	}
	return int(done.Load()), e.ctx.Err()
}

// scheduleBatch produces messages lo to hi-1 of the run in one batch.
func scheduleBatch(e *env, cl *httpclient.Client, cfg scheduledConfig, run uint64, lo, hi int) error {
	msgs := make([]httpclient.BatchMessage, 0, hi-lo)
	now := time.Now().UnixNano()
	for seq := lo; seq < hi; seq++ {
		msgs = append(msgs, httpclient.BatchMessage{
			Payload:  encodePayload(kindJSON, benchID{Run: run, Seq: uint64(seq)}, now, cfg.size),
			Schedule: httpclient.Schedule{Delay: cfg.delay},
		})
	}
	accepted, err := cl.ProduceBatch(e.ctx, cfg.topic, msgs)
	switch {
	case err != nil:
		return fmt.Errorf("produce to %s: %w", cfg.topic, err)
	case accepted != len(msgs):
		return fmt.Errorf("produce to %s: %d of %d messages accepted", cfg.topic, accepted, len(msgs))
	}
	return nil
}

// printScheduled writes the report as a table or as JSON.
func printScheduled(e *env, cfg scheduledConfig, r scheduledReport) error {
	if cfg.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	topic := fmt.Sprintf("%s (created, %d partitions)", r.Topic, cfg.partitions)
	if !r.Created {
		topic = r.Topic + " (existing)"
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "scheduled\t%d messages of %d B on %s, due in %s\n", r.Scheduled, cfg.size, topic, cfg.delay)
	fmt.Fprintf(tw, "set up\t%.1fs: %.0f msg/s\n", r.SetupSeconds, r.ProduceRate)
	fmt.Fprintf(tw, "node CPU\t%.3fs over %.1fs on %d node(s): %.2f%% of a core\n", r.CPUSeconds, r.WindowSeconds, r.NodesRead, r.CorePercent)
	fmt.Fprintf(tw, "resident memory\t%.1f MB before the set-up, %.1f MB after: %.1f B per scheduled message\n",
		r.RSSBeforeBytes/1e6, r.RSSAfterBytes/1e6, r.BytesPerMessage)
	return tw.Flush()
}

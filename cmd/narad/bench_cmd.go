package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// Values of bench --client.
const (
	clientHTTP   = "http"   // every request through net/http with default transport settings
	clientPinned = "pinned" // single-message produces over httpclient.Pinned connections
)

var clientModes = []string{clientHTTP, clientPinned}

// benchConfig is one bench run's settings.
type benchConfig struct {
	topic        string
	servers      []string
	metrics      []string // --metrics: where to read node CPU (default: each server's /metrics)
	client       string
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
	case !slices.Contains(clientModes, c.client):
		return usagef("--client must be one of %s", strings.Join(clientModes, ", "))
	}
	return nil
}

const benchLong = `bench produces --count messages (or for --duration) from --producers workers,
spread over --servers. Each payload carries the run's id, a sequence number and
its send time. With --consumers > 0, consumers run alongside, ack what they
receive and account for every message: bench fails (exit 1) when a message
that was accepted (202) is not consumed within --drain-timeout after the last
produce. Messages of other runs found on the topic are acked and counted as
foreign, so use a topic of its own.

--client picks how requests are sent:
  http    (default) every request (single and batch produce, consume, ack)
          goes through a plain net/http client with http.DefaultTransport's
          settings, as users' HTTP clients send them; requests rotate over
          the servers.
  pinned  each single-message producer keeps one hand-written keep-alive
          connection to one server, producers taking the servers in turn,
          so the client costs less CPU; batch produces, consumes and acks
          go through the CLI's pooled net/http client, rotating over the
          servers.

Node CPU: before and after the run, bench reads process_cpu_seconds_total
(user + system) from every server's /metrics with the run's credentials, or
from the URLs given with --metrics (one per node, e.g. each node's metrics
listener http://host:9100 when http.metrics_addr is set), and reports the
nodes' CPU seconds over the run and the microseconds of node CPU per message
produced (and per message through the full flow, with consumers). The
counter moves in clock ticks (10 ms on Linux), so give short runs enough
messages. A node whose metrics cannot be read is named in the report; the
run goes on.

Idle cost: with --idle-topics N, bench does not load a topic. It creates N
topics named <topic>-000001 … with --partitions each (a topic that exists is
reused), from --producers workers, produces one message to each, waits
--settle, then reads every node's process_cpu_seconds_total and
process_resident_memory_bytes over --window and reports the nodes' CPU in %
of one core and their resident memory growth per partition (against the
reading taken before the set-up, so start from fresh nodes).

Scheduled cost: with --scheduled N, bench creates the topic (default
bench-scheduled when none is named; one that exists is reused) with
--partitions, produces N messages of --size bytes, each due after
--scheduled-delay (at most 168h, the default retention), in batches of 1000
from --producers workers, waits --settle, then reads every node's
process_cpu_seconds_total and process_resident_memory_bytes over --window
and reports the produce rate, the nodes' CPU in % of one core and their
resident memory growth per scheduled message (against the reading taken
before the set-up, so start from fresh nodes).`

func newBenchCmd(e *env, g *globals) *cobra.Command {
	var cfg benchConfig
	var idle idleConfig
	var sched scheduledConfig
	var servers, metrics string
	c := &cobra.Command{
		Use:   "bench <topic>",
		Short: "Load a topic: produce (and optionally consume and ack), then report rates, latencies and node CPU",
		Long:  benchLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("scheduled") && len(args) == 0 {
				return nil // the topic defaults to scheduledTopic
			}
			return exactArgs("topic")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.topic = scheduledTopic
			if len(args) > 0 {
				cfg.topic = args[0]
			}
			cfg.metrics = splitList(metrics)
			idle.prefix, idle.concurrency, idle.asJSON = cfg.topic, cfg.producers, cfg.asJSON
			sched.topic, sched.partitions, sched.size, sched.concurrency = cfg.topic, idle.partitions, cfg.size, cfg.producers
			sched.settle, sched.window, sched.asJSON = idle.settle, idle.window, cfg.asJSON
			scheduled := cmd.Flags().Changed("scheduled")
			if scheduled {
				if cmd.Flags().Changed("idle-topics") {
					return usagef("--scheduled and --idle-topics exclude each other")
				}
				if err := sched.validate(); err != nil {
					return err
				}
			} else if idle.topics > 0 {
				if err := idle.validate(); err != nil {
					return err
				}
			} else if err := cfg.validate(); err != nil {
				return err
			}
			t, err := g.resolve(e)
			if err != nil {
				return err
			}
			if servers != "" {
				t.servers = splitList(servers)
			}
			cl, err := benchClient(e, t, cfg.client)
			if err != nil {
				return err
			}
			cfg.servers = cl.Servers()
			targets, err := metricsTargets(cfg.servers, cfg.metrics)
			if err != nil {
				return err
			}
			warnPlainMetrics(e, t, targets)
			if scheduled {
				rep, err := runScheduled(e, cl, targets, sched)
				if err != nil {
					return err
				}
				return printScheduled(e, sched, rep)
			}
			if idle.topics > 0 {
				rep, err := runIdle(e, cl, targets, idle)
				if err != nil {
					return err
				}
				return printIdle(e, idle, rep)
			}
			before := scrapeCPU(e.ctx, cl, targets)
			rep, err := runBench(e, cl, cfg)
			// Read the counters again even when the run was interrupted.
			after := scrapeCPU(context.WithoutCancel(e.ctx), cl, targets)
			rep.NodeCPU = nodeCPU(before, after, rep)
			if perr := printBench(e, cfg, rep); perr != nil {
				return perr
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&servers, "servers", "", "comma-separated node URLs to spread requests over (default: the resolved server)")
	f.StringVar(&cfg.client, "client", clientHTTP, "how requests are sent: http (net/http, default transport settings) or pinned (hand-written keep-alive connection per producer)")
	f.StringVar(&metrics, "metrics", "", "comma-separated URLs to read each node's process_cpu_seconds_total from (default: <server>/metrics of every server)")
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
	f.IntVar(&idle.topics, "idle-topics", 0, "instead of a load: create this many topics named <topic>-NNNNNN, one message each, and measure the nodes while they idle")
	f.IntVar(&sched.count, "scheduled", 0, "instead of a load: schedule this many messages on the topic (default bench-scheduled) and measure the nodes while they wait")
	f.DurationVar(&sched.delay, "scheduled-delay", time.Hour, "with --scheduled: delay of each message (at most 168h)")
	f.IntVar(&idle.partitions, "partitions", 3, "with --idle-topics or --scheduled: partitions per topic")
	f.DurationVar(&idle.settle, "settle", 10*time.Second, "with --idle-topics or --scheduled: wait this long after the set-up before measuring")
	f.DurationVar(&idle.window, "window", time.Minute, "with --idle-topics or --scheduled: how long to measure")
	return c
}

// benchClient returns the run's client. For --client http its requests all
// go through defaultTransportClient; for pinned it is the CLI's usual
// client, and bench.pin adds the Pinned connections.
func benchClient(e *env, t target, mode string) (*httpclient.Client, error) {
	if mode == clientPinned {
		return newClient(e, t)
	}
	he := *e
	he.httpClient = defaultTransportClient()
	return newClient(&he, t)
}

// defaultTransportClient is a net/http client as users' programs build
// one: a clone of http.DefaultTransport, its settings untouched (idle pool,
// dialer, timeouts), and no client timeout of its own.
func defaultTransportClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		return &http.Client{Transport: t.Clone()}
	}
	return &http.Client{}
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

package main

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// maxAckAttempts bounds the tries of one ack (api.md §3.4: retry every
// non-410 failure; the bound keeps a dead owner from stalling sub forever,
// and the lease then simply expires and the message comes again).
const maxAckAttempts = 8

type subOptions struct {
	topic     string
	peek      bool
	partition int
	pinned    bool
	from      int64
	raw       bool
	asJSON    bool
	format    msgFormat
	noAck     bool
	count     int
	wait      time.Duration
}

func newSubCmd(e *env, g *globals) *cobra.Command {
	var o subOptions
	c := &cobra.Command{
		Use:   "sub <topic>",
		Short: "Consume messages and print them (queue mode, acking each), or --peek without consuming",
		Long: "sub long-polls the topic, prints each message as\n" +
			"  [p<partition> @<offset>] key=<key> <time> <payload>\n" +
			"(no key= when the message has none; a binary key or payload in hex), or with --json\n" +
			"one line of JSON per message (the server's envelope), and acks it,\n" +
			"retrying failed acks. --peek instead reads new messages from each partition's\n" +
			"high watermark (or --from, with --partition) without leasing anything.",
		Args: exactArgs("topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topic = args[0]
			o.pinned = cmd.Flags().Changed("partition")
			fromSet := cmd.Flags().Changed("from")
			switch {
			case fromSet && (!o.peek || !o.pinned):
				return usagef("--from needs --peek and --partition")
			case o.pinned && o.partition < 0, fromSet && o.from < 0, o.count < 0:
				return usagef("--partition, --from and --count must be >= 0")
			}
			if !fromSet {
				o.from = -1
			}
			format, err := pickFormat(o.raw, o.asJSON)
			if err != nil {
				return err
			}
			o.format = format
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if o.peek {
				return peek(e, cl, o)
			}
			return consumeLoop(e, cl, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.peek, "peek", false, "read without consuming: replay new messages from each partition's high watermark")
	f.IntVar(&o.partition, "partition", 0, "only this partition")
	f.Int64Var(&o.from, "from", 0, "with --peek and --partition: start at this offset")
	f.BoolVar(&o.raw, "raw", false, "print only each payload's bytes, one message per line")
	f.BoolVar(&o.asJSON, "json", false, "print each message as one line of JSON, the server's envelope")
	f.BoolVar(&o.noAck, "no-ack", false, "do not ack: the messages come again once their lease expires")
	f.IntVar(&o.count, "count", 0, "stop after this many messages (0 = until interrupted)")
	f.DurationVar(&o.wait, "wait", 10*time.Second, "long-poll wait of each consume (the server may lower it)")
	return c
}

// consumeLoop is queue mode: consume, print, ack, until count or interrupt.
func consumeLoop(e *env, cl *httpclient.Client, o subOptions) error {
	opts := httpclient.ConsumeOptions{Wait: o.wait}
	if o.pinned {
		opts.Partition = &o.partition
	}
	warned := false
	for n := 0; o.count == 0 || n < o.count; {
		var res httpclient.ConsumeResult
		err := withRetries(e, func() (err error) {
			res, err = cl.Consume(e.ctx, o.topic, opts)
			return err
		})
		if e.ctx.Err() != nil {
			return nil // interrupted: a clean stop
		}
		if err != nil {
			return err
		}
		if res.WaitClamped != "" && !warned {
			fmt.Fprintf(e.stderr, "narad: the server lowered --wait to %s\n", res.WaitClamped)
			warned = true
		}
		for _, m := range res.Messages {
			printMessage(e.stdout, m, o.format)
			n++
			if o.noAck {
				continue
			}
			if err := ackWithRetries(e, cl, o.topic, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// ackWithRetries acks m, retrying transport errors and transient statuses.
// A 410 ends it: after an attempt whose fate was unknown (transport error,
// 502) it most likely means that attempt landed; otherwise the lease was lost
// and the message will come again. Only a permanent refusal is an error.
func ackWithRetries(e *env, cl *httpclient.Client, topic string, m httpclient.Message) error {
	backoff, uncertain := e.retryBase, false
	for attempt := 1; ; attempt++ {
		err := cl.Ack(e.ctx, topic, m.ReceiptHandle)
		st := httpclient.StatusOf(err)
		switch {
		case err == nil:
			return nil
		case st == http.StatusGone && uncertain:
			return nil
		case st == http.StatusGone:
			fmt.Fprintf(e.stderr, "narad: ack p%d @%d: lease lost (%v); the message will be delivered again\n", m.Partition, m.Offset, err)
			return nil
		case e.ctx.Err() != nil:
			return nil
		case !transient(err):
			return fmt.Errorf("ack p%d @%d: %w", m.Partition, m.Offset, err)
		case attempt == maxAckAttempts:
			fmt.Fprintf(e.stderr, "narad: ack p%d @%d: giving up after %d attempts (%v); the message will be delivered again\n", m.Partition, m.Offset, attempt, err)
			return nil
		}
		uncertain = uncertain || st == 0 || st == http.StatusBadGateway
		if pause(e.ctx, max(backoff, retryAfter(err))) != nil {
			return nil
		}
		backoff = min(2*backoff, 32*e.retryBase)
	}
}

// peek replays new messages from each partition without leasing them.
func peek(e *env, cl *httpclient.Client, o subOptions) error {
	t, err := cl.Topic(e.ctx, o.topic)
	if err != nil {
		return err
	}
	next, err := peekStarts(t, o)
	if err != nil {
		return err
	}
	parts := make([]int, 0, len(next))
	for p := range next {
		parts = append(parts, p)
	}
	sort.Ints(parts)
	for n := 0; o.count == 0 || n < o.count; {
		got := false
		for _, p := range parts {
			var res httpclient.ReplayResult
			err := withRetries(e, func() (err error) {
				res, err = cl.Replay(e.ctx, o.topic, p, next[p])
				return err
			})
			if e.ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return fmt.Errorf("peek p%d @%d: %w", p, next[p], err)
			}
			switch res.Status {
			case http.StatusOK:
				printMessage(e.stdout, *res.Message, o.format)
				next[p]++
				n, got = n+1, true
			case http.StatusGone:
				next[p]++
				got = true
			}
			if o.count > 0 && n >= o.count {
				return nil
			}
		}
		if !got && pause(e.ctx, e.pollInterval) != nil {
			return nil
		}
	}
	return nil
}

// peekStarts picks the partitions to peek and where each starts, refusing
// partitions whose owner is down (their high watermark is unknown).
func peekStarts(t *httpclient.Topic, o subOptions) (map[int]int64, error) {
	if o.pinned && o.partition >= t.Partitions {
		return nil, fmt.Errorf("partition %d out of range: topic %q has %d", o.partition, t.Name, t.Partitions)
	}
	stats := map[int]httpclient.PartitionStats{}
	for _, s := range t.PartitionStats {
		stats[s.Index] = s
	}
	next := map[int]int64{}
	var down []string
	for p := range t.Partitions {
		if o.pinned && p != o.partition {
			continue
		}
		s, ok := stats[p]
		if !ok || !s.Available() {
			down = append(down, fmt.Sprintf("p%d (owner %s)", p, dash(s.OwnerLiveness)))
			continue
		}
		next[p] = s.HighWatermark
		if o.from >= 0 {
			next[p] = o.from
		}
	}
	if len(down) > 0 {
		return nil, fmt.Errorf("cannot peek topic %q: partition owner unavailable for %s", t.Name, strings.Join(down, ", "))
	}
	return next, nil
}

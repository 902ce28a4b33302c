package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain/deadletter"
)

const (
	// redriveBatchMax is the largest batch redrive consumes, produces and
	// acks at once (the batch consume and batch ack cap, api.md §2.14.3).
	redriveBatchMax = deadletter.PaceBatchMax
	// redriveChunkBytes bounds the estimated body of one batch produce,
	// well under the server's 16 MiB cap.
	redriveChunkBytes = 8 << 20
)

// redriveOpts are the redrive command's arguments and flags.
type redriveOpts struct {
	dlt  string
	to   string
	rate int
	max  int
	wait time.Duration
}

func newRedriveCmd(e *env, g *globals) *cobra.Command {
	var o redriveOpts
	var jf redriveJobFlags
	c := &cobra.Command{
		Use:   "redrive <dead-letter-topic> [--to TOPIC] [--rate N] [--max N] [--wait D | --job [--detach] | --status | --cancel]",
		Short: "Move dead letters back to their origin topic (or --to another)",
		Long: "redrive consumes the dead letters of a dead-letter topic in batches, produces\n" +
			"each one's original key and payload, byte for byte, to the topic it came from\n" +
			"(or to --to), and acks it only once that produce succeeded. A message that is\n" +
			"not a dead letter is skipped and left for its lease to lapse. The run ends when\n" +
			"a consume brings nothing new, or after --max dead letters. A crash between a\n" +
			"produce and its ack redrives that batch again (at least once).\n" +
			"\n" +
			"This client-side run is the default. With --job the server runs the redrive\n" +
			"instead, with the same --to, --rate and --max, and narad follows it, printing\n" +
			"its progress, until it ends; an interrupt leaves the job running on the\n" +
			"server. --detach only starts it. --status prints the topic's last job and\n" +
			"--cancel stops the running one; one job runs per topic at a time.\n" +
			"See docs/api-extensions.md, \"Redrive\".",
		Args: exactArgs("dead-letter-topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.dlt = args[0]
			if err := jf.check(cmd.Flags()); err != nil {
				return err
			}
			switch {
			case o.rate < 0 || o.max < 0 || o.wait < 0:
				return usagef("--rate, --max and --wait must be >= 0")
			case o.to == o.dlt:
				return usagef("--to names the dead-letter topic itself")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if jf.any() {
				return runRedriveJob(e, cl, o, jf, cmd.Flags().Changed("rate"))
			}
			r := newRedriver(e, cl, o, newPacer(o.rate, time.Now, pause))
			return r.run()
		},
	}
	c.ValidArgsFunction = topicCompleter(e, g)
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "produce every dead letter to this topic (default: each one's origin topic)")
	f.IntVar(&o.rate, "rate", 100, "at most this many dead letters redriven per second (0 = unlimited)")
	f.IntVar(&o.max, "max", 0, "stop after this many dead letters redriven (0 = all)")
	f.DurationVar(&o.wait, "wait", 2*time.Second, "long-poll wait of each consume; a consume that brings nothing ends the run")
	jf.register(f)
	return c
}

// dlPos names one message of the dead-letter topic.
type dlPos struct {
	partition int
	offset    int64
}

// dlState is what this run did with a message of the dead-letter topic that
// it did not ack, so that it is counted and reported once.
type dlState int

const (
	// dlSkipped: not a dead letter, left for its lease to lapse.
	dlSkipped dlState = iota + 1
	// dlFailed: its target refused a produce for good this run.
	dlFailed
	// dlUnacked: produced, but its ack failed; when it comes back in
	// this run it is acked without being produced again.
	dlUnacked
)

// redriver is one run of narad redrive.
type redriver struct {
	e        *env
	cl       *httpclient.Client
	o        redriveOpts
	pace     *pacer
	redriven atomic.Int64
	skipped  atomic.Int64
	seen     map[dlPos]dlState
	refused  map[string]error // origin topics that refused a produce for good
	failed   int              // dead letters left because their target refused them
	warned   bool             // the server's wait clamp was reported
}

func newRedriver(e *env, cl *httpclient.Client, o redriveOpts, pace *pacer) *redriver {
	return &redriver{e: e, cl: cl, o: o, pace: pace, seen: map[dlPos]dlState{}, refused: map[string]error{}}
}

// run redrives until the dead-letter topic brings nothing new, --max is
// reached, a failure ends it, or the context ends (a clean stop). It
// prints the summary line in every case.
func (r *redriver) run() error {
	stop := redriveProgress(r.e, func() (int64, int64) { return r.redriven.Load(), r.skipped.Load() })
	err := r.loop()
	stop()
	dest := "to their origins"
	if r.o.to != "" {
		dest = "to " + r.o.to
	}
	fmt.Fprintf(r.e.stdout, "redriven %d dead letters from %s (%s), skipped %d\n", r.redriven.Load(), r.o.dlt, dest, r.skipped.Load())
	if r.e.ctx.Err() != nil {
		return nil // interrupted: a clean stop, as for sub
	}
	if err != nil {
		return err
	}
	unacked := 0
	for _, s := range r.seen {
		if s == dlUnacked {
			unacked++
		}
	}
	if n := r.failed + unacked; n > 0 {
		return fmt.Errorf("%d dead letter(s) not redriven or not acked: they stay in %s", n, r.o.dlt)
	}
	return nil
}

func (r *redriver) loop() error {
	for r.o.max == 0 || r.redriven.Load() < int64(r.o.max) {
		n := redriveBatchMax
		if r.o.max > 0 {
			n = min(n, r.o.max-int(r.redriven.Load()))
		}
		n = r.pace.batch(n)
		if r.pace.wait(r.e.ctx, n) != nil {
			return nil
		}
		var res httpclient.ConsumeResult
		err := withRetries(r.e, func() (err error) {
			res, err = r.cl.Consume(r.e.ctx, r.o.dlt, httpclient.ConsumeOptions{Wait: r.o.wait, Max: n})
			return err
		})
		if r.e.ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("consume %s: %w", r.o.dlt, err)
		}
		if res.WaitClamped != "" && !r.warned {
			fmt.Fprintf(r.e.stderr, "narad: the server lowered --wait to %s\n", res.WaitClamped)
			r.warned = true
		}
		if len(res.Messages) == 0 {
			return nil
		}
		fresh, err := r.batch(res.Messages)
		if err != nil || !fresh {
			return err
		}
	}
	return nil
}

// letterItem is a dead letter of the current batch on its way to target.
type letterItem struct {
	m httpclient.Message
	l deadletter.Letter
}

// batch redrives one consumed batch: parse, produce grouped by target,
// then ack what was produced. fresh is false when the batch held only
// messages this run had already skipped or given up on.
func (r *redriver) batch(msgs []httpclient.Message) (fresh bool, err error) {
	groups := map[string][]letterItem{}
	var order []string
	var acks []httpclient.Message
	for _, m := range msgs {
		p := dlPos{m.Partition, m.Offset}
		switch r.seen[p] {
		case dlSkipped, dlFailed:
			continue
		case dlUnacked:
			acks, fresh = append(acks, m), true
			continue
		}
		fresh = true
		l, target, err := deadletter.Target(m.Payload, r.o.dlt, r.o.to)
		if err != nil {
			r.seen[p] = dlSkipped
			r.skipped.Add(1)
			fmt.Fprintf(r.e.stderr, "narad: skipped p%d @%d of %s: %s; left for its lease to lapse\n",
				m.Partition, m.Offset, r.o.dlt, err)
			continue
		}
		if r.refused[target] != nil {
			r.seen[p] = dlFailed
			r.failed++
			continue
		}
		if _, ok := groups[target]; !ok {
			order = append(order, target)
		}
		groups[target] = append(groups[target], letterItem{m, l})
	}
	var fatal error
	for _, target := range order {
		items := groups[target]
		done, err := r.produce(target, items)
		for _, it := range items[:done] {
			acks = append(acks, it.m)
		}
		r.redriven.Add(int64(done))
		r.pace.take(done)
		if err == nil {
			continue
		}
		if r.e.ctx.Err() != nil {
			break // interrupted: what was not acked comes back when its lease lapses
		}
		for _, it := range items[done:] {
			r.seen[dlPos{it.m.Partition, it.m.Offset}] = dlFailed
		}
		r.failed += len(items) - done
		fmt.Fprintf(r.e.stderr, "narad: produce of %d dead letter(s) to %s failed: %v; they stay in %s and come back when their lease lapses\n", len(items)-done, target, err, r.o.dlt)
		if r.o.to != "" || transient(err) {
			fatal = fmt.Errorf("produce to %s: %w", target, err)
			break
		}
		r.refused[target] = err
	}
	if err := r.ack(acks); err != nil && fatal == nil {
		fatal = err
	}
	return fresh, fatal
}

// produce sends items' original keys and payloads to target in batch
// produces of at most redriveChunkBytes (estimated), and answers how many
// leading items were produced before a failure.
func (r *redriver) produce(target string, items []letterItem) (int, error) {
	done := 0
	for done < len(items) {
		var chunk []httpclient.BatchMessage
		size := 0
		for _, it := range items[done:] {
			n := (len(it.l.Key)+len(it.l.Payload))*4/3 + 64 // base64 at worst
			if len(chunk) > 0 && size+n > redriveChunkBytes {
				break
			}
			chunk = append(chunk, httpclient.BatchMessage{Key: it.l.Key, Payload: it.l.Payload})
			size += n
		}
		err := withRetries(r.e, func() error {
			_, err := r.cl.ProduceBatch(r.e.ctx, target, chunk)
			return err
		})
		if err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}

// ack acks the produced dead letters in one batch. A handle the server
// refuses (its lease lapsed) is reported and remembered: acked without a
// new produce if it comes back in this run. A failed request ends the run.
func (r *redriver) ack(msgs []httpclient.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	handles := make([]string, len(msgs))
	for i, m := range msgs {
		handles[i] = m.ReceiptHandle
	}
	var res []httpclient.AckResult
	err := withRetries(r.e, func() (err error) {
		res, err = r.cl.AckBatch(r.e.ctx, r.o.dlt, handles, httpclient.OpAck)
		return err
	})
	if r.e.ctx.Err() != nil {
		return nil
	}
	if err != nil {
		for _, m := range msgs {
			r.seen[dlPos{m.Partition, m.Offset}] = dlUnacked
		}
		return fmt.Errorf("ack of %d redriven dead letter(s) in %s: %w (a later run may redrive them again)", len(msgs), r.o.dlt, err)
	}
	for i, m := range msgs {
		p := dlPos{m.Partition, m.Offset}
		if res[i].Status == 204 {
			delete(r.seen, p)
			continue
		}
		if r.seen[p] != dlUnacked {
			fmt.Fprintf(r.e.stderr, "narad: ack p%d @%d of %s: http %d: %s; it was redriven but stays in %s (acked if it comes back in this run)\n",
				m.Partition, m.Offset, r.o.dlt, res[i].Status, res[i].Error, r.o.dlt)
		}
		r.seen[p] = dlUnacked
	}
	return nil
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain/deadletter"
)

// ackBatchHandlesMax is the batch ack's handle cap (api.md §2.15.1).
const ackBatchHandlesMax = 100

// ackOpts are the ack command's flags.
type ackOpts struct {
	handles      []string
	extend, nack bool
	delay        time.Duration
	reason       string
}

func newAckCmd(e *env, g *globals) *cobra.Command {
	var o ackOpts
	c := &cobra.Command{
		Use:   "ack <topic> [--handle H]... [--extend | --nack [--delay D] [--reason TEXT]]",
		Short: "Ack, extend or nack leased messages by receipt handle",
		Long: "ack settles the leases the handles name: ack (the default) settles them\n" +
			"for good, --extend renews them, --nack releases them for redelivery, after\n" +
			"--delay when given, keeping --reason as their last nack reason for a\n" +
			"dead-letter policy (docs/api-extensions.md). Without --handle the handles\n" +
			"are read from standard input, one per line; a line holding a message's\n" +
			"JSON envelope (narad sub --json) gives its receipt_handle. A failed handle\n" +
			"is reported on standard error and makes the command exit 1.",
		Args: exactArgs("topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			op, err := o.op(cmd)
			if err != nil {
				return err
			}
			hs := o.handles
			if len(hs) == 0 {
				if hs, err = readHandles(e.stdin); err != nil {
					return err
				}
			}
			if len(hs) == 0 {
				return usagef("no receipt handle: give --handle or handles on standard input")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			return settleHandles(e, cl, args[0], hs, op, httpclient.NackOptions{Delay: o.delay, Reason: o.reason})
		},
	}
	f := c.Flags()
	f.StringArrayVar(&o.handles, "handle", nil, "a receipt handle (repeatable; else read from standard input)")
	f.BoolVar(&o.extend, "extend", false, "renew the leases for a full visibility timeout")
	f.BoolVar(&o.nack, "nack", false, "release the leases for redelivery")
	f.DurationVar(&o.delay, "delay", 0, "with --nack: keep the messages from redelivery this long (whole milliseconds, at most 12h)")
	f.StringVar(&o.reason, "reason", "", "with --nack: why, kept as the messages' last nack reason and written into their dead letters (1 to 1024 bytes)")
	return c
}

// op checks the flag combination and names the settle op.
func (o ackOpts) op(cmd *cobra.Command) (httpclient.AckOp, error) {
	switch {
	case o.extend && o.nack:
		return 0, usagef("--extend and --nack are mutually exclusive")
	case cmd.Flags().Changed("delay") && !o.nack:
		return 0, usagef("--delay needs --nack")
	case o.delay < 0:
		return 0, usagef("--delay must be >= 0")
	case cmd.Flags().Changed("reason") && !o.nack:
		return 0, usagef("--reason needs --nack")
	case cmd.Flags().Changed("reason") && (o.reason == "" || len(o.reason) > deadletter.ReasonBytesMax || !utf8.ValidString(o.reason)):
		return 0, usagef("--reason must be 1 to %d bytes of UTF-8", deadletter.ReasonBytesMax)
	case o.extend:
		return httpclient.OpExtend, nil
	case o.nack:
		return httpclient.OpNack, nil
	}
	return httpclient.OpAck, nil
}

// readHandles reads one handle per line: a bare handle, or a JSON envelope
// carrying receipt_handle. Blank lines are skipped.
func readHandles(r *bufio.Reader) ([]string, error) {
	var hs []string
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 16<<20) // an envelope holds its payload
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, "{") {
			hs = append(hs, line)
			continue
		}
		var env struct {
			ReceiptHandle string `json:"receipt_handle"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil || env.ReceiptHandle == "" {
			return nil, usagef("standard input line %d: a JSON line must be a message envelope with a receipt_handle", n)
		}
		hs = append(hs, env.ReceiptHandle)
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read handles: %w", err)
	}
	return hs, nil
}

// settleHandles sends one handle in the single form and more in batches of
// at most 100, reports each refused handle and sums up on standard error.
func settleHandles(e *env, cl *httpclient.Client, topic string, hs []string, op httpclient.AckOp, nack httpclient.NackOptions) error {
	failed := 0
	report := func(h string, err error) {
		failed++
		fmt.Fprintf(e.stderr, "narad: %s: %v\n", h, err)
	}
	if len(hs) == 1 {
		if err := withRetries(e, func() error { return settleOne(e, cl, topic, hs[0], op, nack) }); err != nil {
			report(hs[0], err)
		}
	}
	for start := 0; len(hs) > 1 && start < len(hs); start += ackBatchHandlesMax {
		chunk := hs[start:min(start+ackBatchHandlesMax, len(hs))]
		var res []httpclient.AckResult
		err := withRetries(e, func() (err error) {
			res, err = settleBatch(e, cl, topic, chunk, op, nack)
			return err
		})
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: %d of %d handle(s) before the failure\n", op, start-failed, len(hs))
			return fmt.Errorf("%s of handles %d-%d: %w", op, start+1, start+len(chunk), err)
		}
		for i, r := range res {
			if r.Status != 204 {
				report(chunk[i], fmt.Errorf("http %d: %s", r.Status, r.Error))
			}
		}
	}
	fmt.Fprintf(e.stderr, "%s: %d of %d handle(s)%s\n", op, len(hs)-failed, len(hs), delayNote(op, nack.Delay))
	if failed > 0 {
		return fmt.Errorf("%d handle(s) not settled", failed)
	}
	return nil
}

func settleOne(e *env, cl *httpclient.Client, topic, h string, op httpclient.AckOp, nack httpclient.NackOptions) error {
	switch op {
	case httpclient.OpExtend:
		return cl.Extend(e.ctx, topic, h)
	case httpclient.OpNack:
		return cl.NackWith(e.ctx, topic, h, nack)
	}
	return cl.Ack(e.ctx, topic, h)
}

func settleBatch(e *env, cl *httpclient.Client, topic string, hs []string, op httpclient.AckOp, nack httpclient.NackOptions) ([]httpclient.AckResult, error) {
	if op == httpclient.OpNack {
		return cl.NackBatchWith(e.ctx, topic, hs, nack)
	}
	return cl.AckBatch(e.ctx, topic, hs, op)
}

func delayNote(op httpclient.AckOp, delay time.Duration) string {
	if op != httpclient.OpNack || delay <= 0 {
		return ""
	}
	return fmt.Sprintf(", redelivered no sooner than %v from now", delay)
}

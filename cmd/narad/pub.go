package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// maxMessageBytes is the single-produce body cap (api.md §0.2).
const maxMessageBytes = 1 << 20

func newPubCmd(e *env, g *globals) *cobra.Command {
	var key, file string
	var partition, count int
	var rate float64
	var asJSON bool
	var delay time.Duration
	var deliverAt string
	c := &cobra.Command{
		Use:   "pub <topic> [message]",
		Short: "Produce a message from the argument, a file (-f) or standard input",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("pub needs a topic and at most one message argument (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 && file != "" {
				return usagef("give the message as an argument or with -f, not both")
			}
			if count < 1 || rate < 0 {
				return usagef("--count must be >= 1 and --rate >= 0")
			}
			var pin *int
			if cmd.Flags().Changed("partition") {
				if partition < 0 {
					return usagef("--partition must be >= 0")
				}
				pin = &partition
			}
			sched, err := pubSchedule(delay, deliverAt)
			if err != nil {
				return err
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			body, err := pubBody(e, args, file)
			if err != nil {
				return err
			}
			start := time.Now()
			for i := range count {
				if rate > 0 && i > 0 {
					due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
					if err := pause(e.ctx, time.Until(due)); err != nil {
						return err
					}
				}
				if err := cl.ProduceScheduled(e.ctx, args[0], body, key, pin, sched); err != nil {
					return err
				}
				if asJSON {
					printAccepted(e.stdout, args[0], key, pin, len(body))
				} else {
					fmt.Fprintf(e.stderr, "accepted (%d bytes)\n", len(body))
				}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&key, "key", "k", "", "partitioning key")
	f.IntVar(&partition, "partition", 0, "pin to this partition (overrides the key)")
	f.StringVarP(&file, "file", "f", "", "read the message from this file (- = standard input)")
	f.IntVar(&count, "count", 1, "send the message this many times")
	f.Float64Var(&rate, "rate", 0, "messages per second when --count > 1 (0 = as fast as possible)")
	f.DurationVar(&delay, "delay", 0, "deliver no sooner than this long after the produce (e.g. 90s, 2h)")
	f.StringVar(&deliverAt, "deliver-at", "", "deliver no sooner than this time (RFC 3339, e.g. 2026-12-24T18:00:00Z)")
	f.BoolVar(&asJSON, "json", false, `print a line of JSON on standard output per accepted message: {"topic","bytes"[,"key"][,"partition"]}`)
	return c
}

// acceptedLine is what pub --json prints for each 202.
type acceptedLine struct {
	Topic     string `json:"topic"`
	Bytes     int    `json:"bytes"`
	Key       string `json:"key,omitempty"`
	Partition *int   `json:"partition,omitempty"`
}

func printAccepted(w io.Writer, topic, key string, pin *int, n int) {
	line, _ := json.Marshal(acceptedLine{Topic: topic, Bytes: n, Key: key, Partition: pin})
	_, _ = w.Write(append(line, '\n'))
}

// pubBody is the argument, else the file, else all of standard input; it
// must hold 1 byte to 1 MiB.
func pubBody(e *env, args []string, file string) ([]byte, error) {
	var body []byte
	var err error
	switch {
	case len(args) == 2:
		body = []byte(args[1])
	case file != "" && file != "-":
		var f *os.File
		if f, err = os.Open(file); err != nil {
			return nil, err
		}
		defer f.Close()
		body, err = io.ReadAll(io.LimitReader(f, maxMessageBytes+1))
	default:
		body, err = io.ReadAll(io.LimitReader(e.stdin, maxMessageBytes+1))
	}
	if err != nil {
		return nil, err
	}
	if len(body) == 0 {
		return nil, fmt.Errorf("message required: the body is empty")
	}
	if len(body) > maxMessageBytes {
		return nil, fmt.Errorf("message too large: more than %d bytes (the single-produce limit)", maxMessageBytes)
	}
	return body, nil
}

// pubSchedule is the schedule --delay or --deliver-at asks for (at most one).
func pubSchedule(delay time.Duration, deliverAt string) (httpclient.Schedule, error) {
	switch {
	case delay != 0 && deliverAt != "":
		return httpclient.Schedule{}, usagef("give --delay or --deliver-at, not both")
	case delay < 0:
		return httpclient.Schedule{}, usagef("--delay must be >= 0")
	case deliverAt != "":
		at, err := time.Parse(time.RFC3339Nano, deliverAt)
		if err != nil {
			return httpclient.Schedule{}, usagef("--deliver-at wants an RFC 3339 time such as 2026-12-24T18:00:00Z: %v", err)
		}
		return httpclient.Schedule{DeliverAt: at}, nil
	}
	return httpclient.Schedule{Delay: delay}, nil
}

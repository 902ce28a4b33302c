package main

import (
	"fmt"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

func newReplayCmd(e *env, g *globals) *cobra.Command {
	var partition int
	var from, to int64
	var raw, asJSON bool
	c := &cobra.Command{
		Use:   "replay <topic> --partition P [--from O] [--to O]",
		Short: "Read a partition's messages in [from, to) without consuming them",
		Long: "replay reads the records of one partition from --from (default: the oldest\n" +
			"retained offset) up to --to, exclusive (default: the high watermark), leaving\n" +
			"the queue untouched. Offsets that aged out of retention are skipped.",
		Args: exactArgs("topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if !f.Changed("partition") {
				return usagef("replay needs --partition")
			}
			if partition < 0 || from < 0 || to < 0 {
				return usagef("--partition, --from and --to must be >= 0")
			}
			format, err := pickFormat(raw, asJSON)
			if err != nil {
				return err
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			topic := args[0]
			if !f.Changed("from") || !f.Changed("to") {
				s, err := partitionStats(e, cl, topic, partition)
				if err != nil {
					return err
				}
				if !f.Changed("from") {
					from = s.OldestOffset
				}
				if !f.Changed("to") {
					to = s.HighWatermark
				}
			}
			return replayRange(e, cl, topic, partition, from, to, format)
		},
	}
	f := c.Flags()
	f.IntVar(&partition, "partition", 0, "the partition to read (required)")
	f.Int64Var(&from, "from", 0, "first offset (default: the oldest retained)")
	f.Int64Var(&to, "to", 0, "end offset, exclusive (default: the high watermark)")
	f.BoolVar(&raw, "raw", false, "print only each payload's bytes, one message per line")
	f.BoolVar(&asJSON, "json", false, "print each message as one line of JSON, the server's envelope")
	return c
}

// partitionStats describes the topic and returns partition p's statistics,
// failing, with the partition named, when its owner is unavailable.
func partitionStats(e *env, cl *httpclient.Client, topic string, p int) (httpclient.PartitionStats, error) {
	t, err := cl.Topic(e.ctx, topic)
	if err != nil {
		return httpclient.PartitionStats{}, err
	}
	if p >= t.Partitions {
		return httpclient.PartitionStats{}, fmt.Errorf("partition %d out of range: topic %q has %d", p, topic, t.Partitions)
	}
	for _, s := range t.PartitionStats {
		if s.Index != p {
			continue
		}
		if !s.Available() {
			return s, fmt.Errorf("partition %d of topic %q is unavailable (owner %s): its offsets are unknown; give --from and --to, or retry later", p, topic, dash(s.OwnerLiveness))
		}
		return s, nil
	}
	return httpclient.PartitionStats{}, fmt.Errorf("partition %d of topic %q has no statistics in the describe answer", p, topic)
}

// replayRange prints the records of [from, to), skipping offsets that answer
// 410 and stopping early at the end of the log.
func replayRange(e *env, cl *httpclient.Client, topic string, p int, from, to int64, format msgFormat) error {
	n, skipped := 0, 0
	for off := from; off < to; off++ {
		var res httpclient.ReplayResult
		err := withRetries(e, func() (err error) {
			res, err = cl.Replay(e.ctx, topic, p, off)
			return err
		})
		if err != nil {
			return fmt.Errorf("replay p%d @%d: %w", p, off, err)
		}
		if res.Status == http.StatusNoContent {
			break
		}
		if res.Status == http.StatusGone {
			skipped++
			continue
		}
		printMessage(e.stdout, *res.Message, format)
		n++
	}
	fmt.Fprintf(e.stderr, "%d message(s) replayed from p%d [%d, %d)\n", n, p, from, to)
	if skipped > 0 {
		fmt.Fprintf(e.stderr, "%d offset(s) skipped: aged out of retention or unreadable\n", skipped)
	}
	return nil
}

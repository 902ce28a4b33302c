package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// durationMs is a flag holding a duration in milliseconds. It takes Go
// durations ("90s", "1h30m"), whole days ("7d"), and "forever".
type durationMs struct {
	ms      int64
	forever bool
}

func (d *durationMs) String() string {
	if d.forever {
		return "forever"
	}
	return formatMs(d.ms)
}

func (d *durationMs) Type() string { return "duration" }

func (d *durationMs) Set(s string) error {
	if s == "forever" {
		*d = durationMs{forever: true}
		return nil
	}
	dur, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationMs{ms: dur.Milliseconds()}
	return nil
}

// parseDuration is time.ParseDuration plus a whole-days form ("7d"); a bare
// "0" is zero and negatives are refused.
func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("invalid duration %q: want e.g. 90s, 1h30m or 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid duration %q: want e.g. 90s, 1h30m or 7d", s)
	}
	return d, nil
}

// readSchema takes --schema: inline JSON, @file, or - for standard input.
func readSchema(e *env, arg string) (json.RawMessage, error) {
	var b []byte
	var err error
	switch {
	case arg == "-":
		b, err = io.ReadAll(e.stdin)
	case strings.HasPrefix(arg, "@"):
		b, err = os.ReadFile(arg[1:])
	default:
		b = []byte(arg)
	}
	if err != nil {
		return nil, fmt.Errorf("--schema: %w", err)
	}
	if !json.Valid(b) {
		return nil, usagef("--schema: not valid JSON")
	}
	return json.RawMessage(strings.TrimSpace(string(b))), nil
}

func newTopicCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("topic", "Create, list, inspect, change, link and delete topics", "topics")
	c.AddCommand(newTopicAddCmd(e, g), newTopicLsCmd(e, g), newTopicInfoCmd(e, g), newTopicEditCmd(e, g), newTopicSchemaCmd(e, g), newTopicRmCmd(e, g),
		newTopicAttachCmd(e, g), newTopicDetachCmd(e, g), newTopicPauseCmd(e, g), newTopicResumeCmd(e, g), newTopicSkipCmd(e, g),
		newTopicChildrenCmd(e, g), newTopicWaitCmd(e, g))
	return c
}

func newTopicAddCmd(e *env, g *globals) *cobra.Command {
	var spec httpclient.TopicSpec
	var retention, visibility, delay durationMs
	var schema string
	var redelivery redeliveryFlags
	var deadLetter deadLetterFlags
	c := &cobra.Command{
		Use:   "add <name>",
		Short: "Create a topic and print it as JSON",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.Name = args[0]
			if cmd.Flags().Changed("delay") && spec.Parent == "" {
				return usagef("--delay needs --parent")
			}
			if retention.forever {
				spec.RetentionMs = new(int64)
			} else if retention.ms > 0 {
				spec.RetentionMs = &retention.ms
			}
			spec.VisibilityTimeoutMs, spec.FanoutDelayMs = visibility.ms, delay.ms
			var err error
			if spec.Redelivery, err = redelivery.policy(cmd.Flags()); err != nil {
				return err
			}
			if spec.DeadLetter, err = deadLetter.policy(cmd.Flags()); err != nil {
				return err
			}
			if schema != "" {
				if spec.Schema, err = readSchema(e, schema); err != nil {
					return err
				}
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			t, err := cl.CreateTopic(e.ctx, spec)
			if err != nil {
				return err
			}
			return printJSON(e.stdout, t)
		},
	}
	f := c.Flags()
	f.IntVar(&spec.Partitions, "partitions", 0, "partition count (0 = server default)")
	f.Var(&retention, "retention", `retention window, e.g. 24h or 7d (0 = server default, "forever" = keep forever)`)
	f.Var(&visibility, "visibility", "lease length of a consume (0 = server default; fixed after creation)")
	f.Int64Var(&spec.MaxInFlightPerPartition, "max-in-flight", 0, "leased messages per partition (0 = server default)")
	f.Int64Var(&spec.MaxAckedAheadPerPartition, "max-acked-ahead", 0, "out-of-order acks held per partition (0 = server default)")
	f.StringVar(&schema, "schema", "", "JSON Schema: inline JSON, @file, or - for standard input")
	f.StringVar(&spec.Parent, "parent", "", "create as a fan-out child of this topic")
	f.Var(&delay, "delay", "make the child a delay child (needs --parent)")
	redelivery.register(f, false)
	deadLetter.register(f, false)
	return c
}

func newTopicLsCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List topics",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			topics, err := cl.ListTopics(e.ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, topics)
			}
			tw := newTable(e.stdout)
			fmt.Fprintln(tw, "NAME\tPARTITIONS\tRETENTION\tROLE")
			for _, t := range topics {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", t.Name, t.Partitions, retentionText(t.RetentionMs), t.Role)
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of topic objects")
	return c
}

func retentionText(ms int64) string {
	if ms == 0 {
		return "forever"
	}
	return formatMs(ms)
}

func newTopicInfoCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "info <name>",
		Short: "Describe a topic: settings, schema version and per-partition statistics",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			t, err := cl.Topic(e.ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, t)
			}
			return printTopicInfo(e.stdout, t)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the topic object as JSON")
	return c
}

func printTopicInfo(w io.Writer, t *httpclient.Topic) error {
	fields := newFieldTable(w)
	row := fields.row
	row("name", t.Name)
	row("id", t.ID)
	row("role", t.Role)
	row("owner", t.Owner)
	row("partitions", strconv.Itoa(t.Partitions))
	row("retention", retentionText(t.RetentionMs))
	row("visibility timeout", formatMs(t.VisibilityTimeoutMs))
	row("max in flight", fmt.Sprintf("%d per partition", t.MaxInFlightPerPartition))
	row("max acked ahead", fmt.Sprintf("%d per partition", t.MaxAckedAheadPerPartition))
	row("created", time.Unix(t.CreatedAt, 0).UTC().Format(time.RFC3339))
	row("parent", t.Parent)
	row("children", strings.Join(t.Children, ", "))
	if t.FanoutDelayMs > 0 {
		row("fan-out delay", formatMs(t.FanoutDelayMs))
	}
	row("redelivery", redeliveryText(t.Redelivery))
	row("dead letter", deadLetterText(t.DeadLetter))
	row("redrive", redriveText(t.Redrive))
	if t.SchemaVersion > 0 {
		row("schema", fmt.Sprintf("version %d", t.SchemaVersion))
	} else {
		row("schema", "none")
	}
	if err := fields.flush(); err != nil {
		return err
	}
	if len(t.PartitionStats) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "PARTITION\tOWNER\tSTATUS\tOLDEST\tHIGH WATERMARK\tSEGMENTS\tSIZE")
	down := 0
	for _, s := range t.PartitionStats {
		if !s.Available() {
			down++
			fmt.Fprintf(tw, "%d\t%s\tunavailable (%s)\t-\t-\t-\t-\n", s.Index, dash(s.OwnerNode), dash(s.OwnerLiveness))
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\tok\t%d\t%d\t%d\t%s\n", s.Index, dash(s.OwnerNode), s.OldestOffset, s.HighWatermark, s.Segments, formatBytes(s.SizeBytes))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if down > 0 {
		fmt.Fprintf(w, "\n%d of %d partitions unavailable: their numbers are unknown\n", down, len(t.PartitionStats))
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newTopicEditCmd(e *env, g *globals) *cobra.Command {
	var change httpclient.TopicAlter
	var retention, visibility durationMs
	var schema string
	var maxInFlight, maxAckedAhead int64
	var redelivery redeliveryFlags
	var deadLetter deadLetterFlags
	c := &cobra.Command{
		Use:   "edit <name>",
		Short: "Change a topic: retention, caps, partition count (grow only), redelivery backoff, dead-letter policy or schema",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if f.Changed("visibility") {
				return usagef("--visibility cannot be changed: a topic's visibility timeout is fixed at creation")
			}
			if f.Changed("retention") {
				change.RetentionMs = &retention.ms
			}
			if f.Changed("max-in-flight") {
				change.MaxInFlightPerPartition = &maxInFlight
			}
			if f.Changed("max-acked-ahead") {
				change.MaxAckedAheadPerPartition = &maxAckedAhead
			}
			if schema != "" {
				var err error
				if change.Schema, err = readSchema(e, schema); err != nil {
					return err
				}
			} else if change.SchemaBaseVersion != 0 {
				return usagef("--schema-base-version needs --schema")
			}
			var err error
			if change.Redelivery, err = redelivery.policy(f); err != nil {
				return err
			}
			change.ClearRedelivery = redelivery.none
			if change.DeadLetter, err = deadLetter.policy(f); err != nil {
				return err
			}
			change.ClearDeadLetter = deadLetter.none
			if change.RetentionMs == nil && change.MaxInFlightPerPartition == nil && change.MaxAckedAheadPerPartition == nil && change.Partitions == 0 && change.Schema == nil &&
				change.Redelivery == nil && !change.ClearRedelivery && change.DeadLetter == nil && !change.ClearDeadLetter {
				return usagef("nothing to change: give --retention, --partitions, --schema, --max-in-flight, --max-acked-ahead, --redelivery-initial, --no-redelivery, --dead-letter-topic or --no-dead-letter")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			t, err := cl.AlterTopic(e.ctx, args[0], change)
			if err != nil {
				return err
			}
			return printJSON(e.stdout, t)
		},
	}
	f := c.Flags()
	f.Var(&retention, "retention", `new retention, e.g. 24h or 7d ("0" or "forever" = keep forever)`)
	f.IntVar(&change.Partitions, "partitions", 0, "grow to this many partitions")
	f.StringVar(&schema, "schema", "", "register a new schema version: inline JSON, @file, or - for standard input")
	f.IntVar(&change.SchemaBaseVersion, "schema-base-version", 0, "apply the schema only if the current version is this one")
	f.Int64Var(&maxInFlight, "max-in-flight", 0, "leased messages per partition (0 = server default)")
	f.Int64Var(&maxAckedAhead, "max-acked-ahead", 0, "out-of-order acks held per partition (0 = server default)")
	f.Var(&visibility, "visibility", "refused: the visibility timeout is fixed at creation")
	redelivery.register(f, true)
	deadLetter.register(f, true)
	return c
}

func newTopicSchemaCmd(e *env, g *globals) *cobra.Command {
	var current bool
	c := &cobra.Command{
		Use:   "schema <name>",
		Short: "Print a topic's schema history as JSON (or only the current schema)",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			h, err := cl.SchemaHistory(e.ctx, args[0])
			if err != nil {
				return err
			}
			if !current {
				return printJSON(e.stdout, h)
			}
			for _, v := range h.Versions {
				if v.Version == h.Version {
					return printJSON(e.stdout, v.Schema)
				}
			}
			fmt.Fprintln(e.stdout, "no schema")
			return nil
		},
	}
	c.Flags().BoolVar(&current, "current", false, "print only the current schema")
	return c
}

func newTopicRmCmd(e *env, g *globals) *cobra.Command {
	return newRmCmd(e, g, rmSpec{
		use: "rm <name>", arg: "name", kind: "topic",
		short:    "Delete a topic and all its data (asks first unless -f)",
		question: "delete topic %q and all its data? [y/N] ",
		remove:   func(cl *httpclient.Client, name string) error { return cl.DeleteTopic(e.ctx, name) },
	})
}

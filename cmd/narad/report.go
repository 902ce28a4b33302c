package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// newServerCmd is the `server` parent: start a node, or report on the cluster.
func newServerCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("server", "Run a node, or report on the cluster's topics and placement")
	c.AddCommand(newServerStartCmd(e), newReportCmd(e, g))
	return c
}

// reportRow is one topic's line of the report.
type reportRow struct {
	Topic       string   `json:"topic"`
	Partitions  int      `json:"partitions"`
	Messages    int64    `json:"messages"`
	SizeBytes   int64    `json:"size_bytes"`
	Owners      []string `json:"owners"`
	Role        string   `json:"role"`
	Unavailable int      `json:"unavailable_partitions,omitempty"`
}

// serverReport is the whole report; totals skip unavailable partitions.
type serverReport struct {
	Topics        []reportRow `json:"topics"`
	Total         reportRow   `json:"total"`
	PartialTopics int         `json:"partial_topics"`
}

func newReportCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "report",
		Short: "Summarize every topic: partitions, messages, size, owners, role",
		Long: "report lists the topics, describes each, and prints TOPIC, PARTS, MESSAGES\n" +
			"(the sum of the high watermarks), SIZE, OWNERS and ROLE, with a total row.\n" +
			"Partitions whose owner is unavailable are left out of the numbers and their\n" +
			"topic is marked.",
		Args: exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			rep, err := buildReport(e, cl)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, rep)
			}
			return printReport(e.stdout, rep)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return c
}

func buildReport(e *env, cl *httpclient.Client) (serverReport, error) {
	topics, err := cl.ListTopics(e.ctx)
	if err != nil {
		return serverReport{}, err
	}
	rep := serverReport{Topics: []reportRow{}, Total: reportRow{Topic: "total", Owners: []string{}}}
	allOwners := map[string]bool{}
	for _, lt := range topics {
		t, err := cl.Topic(e.ctx, lt.Name)
		if httpclient.StatusOf(err) == 404 {
			continue // deleted since the listing
		}
		if err != nil {
			return serverReport{}, fmt.Errorf("describe %q: %w", lt.Name, err)
		}
		row := topicRow(t)
		for _, o := range row.Owners {
			allOwners[o] = true
		}
		if row.Unavailable > 0 {
			rep.PartialTopics++
		}
		rep.Topics = append(rep.Topics, row)
		rep.Total.Partitions += row.Partitions
		rep.Total.Messages += row.Messages
		rep.Total.SizeBytes += row.SizeBytes
		rep.Total.Unavailable += row.Unavailable
	}
	rep.Total.Owners = sortedKeys(allOwners)
	return rep, nil
}

// topicRow sums the available partitions of one described topic.
func topicRow(t *httpclient.Topic) reportRow {
	row := reportRow{Topic: t.Name, Partitions: t.Partitions, Role: t.Role}
	owners := map[string]bool{}
	seen := 0
	for _, s := range t.PartitionStats {
		if s.OwnerNode != "" {
			owners[s.OwnerNode] = true
		}
		if !s.Available() {
			continue
		}
		seen++
		row.Messages += s.HighWatermark
		row.SizeBytes += s.SizeBytes
	}
	row.Unavailable = t.Partitions - seen
	if row.Unavailable < 0 {
		row.Unavailable = 0
	}
	row.Owners = sortedKeys(owners)
	return row
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func printReport(w io.Writer, rep serverReport) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "TOPIC\tPARTS\tMESSAGES\tSIZE\tOWNERS\tROLE")
	line := func(r reportRow, role string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", r.Topic, r.Partitions, r.Messages, formatBytes(r.SizeBytes), dash(strings.Join(r.Owners, ",")), role)
	}
	for _, r := range rep.Topics {
		role := r.Role
		if r.Unavailable > 0 {
			role += fmt.Sprintf(" [%d of %d partitions unavailable]", r.Unavailable, r.Partitions)
		}
		line(r, role)
	}
	line(rep.Total, fmt.Sprintf("%d topic(s)", len(rep.Topics)))
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.PartialTopics > 0 {
		fmt.Fprintf(w, "%d topic(s) partial: %d partition(s) unavailable and left out of the numbers\n", rep.PartialTopics, rep.Total.Unavailable)
	}
	return nil
}

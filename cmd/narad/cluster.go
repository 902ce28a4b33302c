package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

func newClusterCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("cluster", "Inspect and operate the cluster: members, moves, decommission, the metadata history (admin)")
	members := newClusterMembersCmd(e, g)
	members.AddCommand(newClusterForgetCmd(e, g))
	c.AddCommand(newClusterEventsCmd(e, g), members, newClusterMovesCmd(e, g), newClusterDecommissionCmd(e, g))
	return c
}

// maxEventPages stops --all on a server whose next_before never reaches 0.
const maxEventPages = 1 << 20

func newClusterEventsCmd(e *env, g *globals) *cobra.Command {
	var q httpclient.EventsQuery
	var all, asJSON bool
	c := &cobra.Command{
		Use:   "events",
		Short: "Show the metadata history, newest first: who changed what, when, and what came of it",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			if q.Limit < 1 || q.Limit > httpclient.MaxEventsLimit {
				return usagef("--limit must be 1 to %d (got %d)", httpclient.MaxEventsLimit, q.Limit)
			}
			if all && !cmd.Flags().Changed("limit") {
				q.Limit = httpclient.MaxEventsLimit
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			page, err := readEvents(e, cl, q, all)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, page)
			}
			if err := printEvents(e, page.Events); err != nil {
				return err
			}
			if page.NextBefore != 0 {
				fmt.Fprintf(e.stderr, "older events remain: repeat with --before %d, or use --all\n", page.NextBefore)
			}
			return nil
		},
	}
	f := c.Flags()
	f.IntVar(&q.Limit, "limit", 50, "events per request, 1 to 1000 (with --all: 1000 unless given)")
	f.Uint64Var(&q.Before, "before", 0, "only events older than this sequence number (0 = from the newest)")
	f.BoolVar(&all, "all", false, "follow the pages to the oldest event")
	f.BoolVar(&q.Heartbeats, "heartbeats", false, "include the MemberHeartbeat entries")
	f.BoolVar(&asJSON, "json", false, `print {"events":[...],"next_before":N} as JSON`)
	return c
}

// readEvents reads one page, or with all every page from q.Before down to
// the oldest; the pages' sequence numbers must go down.
func readEvents(e *env, cl *httpclient.Client, q httpclient.EventsQuery, all bool) (*httpclient.EventPage, error) {
	out := &httpclient.EventPage{Events: []httpclient.Event{}}
	for range maxEventPages {
		page, err := cl.Events(e.ctx, q)
		if err != nil {
			return nil, err
		}
		out.Events = append(out.Events, page.Events...)
		out.NextBefore = page.NextBefore
		if !all || page.NextBefore == 0 {
			return out, nil
		}
		if q.Before != 0 && page.NextBefore >= q.Before {
			return nil, fmt.Errorf("cluster events: next_before %d does not go below %d: %w", page.NextBefore, q.Before, httpclient.ErrMalformedReply)
		}
		q.Before = page.NextBefore
	}
	return nil, fmt.Errorf("cluster events: more than %d pages: %w", maxEventPages, httpclient.ErrMalformedReply)
}

func printEvents(e *env, events []httpclient.Event) error {
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "SEQ\tTIME\tACTOR\tTYPE\tSUBJECT\tRESULT")
	for _, ev := range events {
		result := ev.Result
		if result != "ok" && ev.Detail != "" {
			result += ": " + ev.Detail
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ev.Seq, ev.At.Local().Format(time.RFC3339), cell(ev.Actor), cell(ev.Type), cell(ev.Subject), cell(result))
	}
	return tw.Flush()
}

// cell makes server text safe for one table cell: control characters become
// spaces, and empty is "-".
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return dash(s)
}

func newClusterMembersCmd(e *env, g *globals) *cobra.Command {
	var asJSON, detail bool
	c := &cobra.Command{
		Use:   "members",
		Short: "List the cluster's members: status, Raft role, partitions and heartbeat age",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			list := cl.Members
			if detail {
				list = cl.MembersDetail
			}
			members, err := list(e.ctx)
			if err != nil {
				return err
			}
			if members == nil {
				members = []httpclient.Member{}
			}
			if asJSON {
				return printJSON(e.stdout, members)
			}
			tw := newTable(e.stdout)
			head := "ID\tADDR\tSTATUS\tROLE\tPARTITIONS\tHEARTBEAT"
			if detail {
				head += "\tBACKLOG\tQUARANTINE"
			}
			fmt.Fprintln(tw, head)
			for _, m := range members {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%ds ago", cell(m.ID), cell(m.Addr), memberStatus(m), memberRole(m), memberPartitions(m), m.HeartbeatAgeSeconds)
				if detail {
					fmt.Fprintf(tw, "\t%s", memberDetail(m))
				}
				fmt.Fprintln(tw)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, m := range members {
				for _, b := range m.DecommissionBlocked {
					fmt.Fprintf(e.stdout, "%s stays: %s: %s\n", cell(m.ID), cell(b.Code), cell(b.Message))
				}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of members")
	c.Flags().BoolVar(&detail, "detail", false, "also ask each member for its own status: dispatch backlog, quarantined copies")
	return c
}

// memberDetail is a member's backlog and quarantine cells, or why its
// status could not be read.
func memberDetail(m httpclient.Member) string {
	st := m.NodeStatus
	if st == nil {
		return "-\t" + cell("unknown: "+m.StatusError)
	}
	return fmt.Sprintf("%d records\t%d copies, %d bytes", st.DispatchBacklog, st.Quarantine.Copies, st.Quarantine.Bytes)
}

func memberStatus(m httpclient.Member) string {
	if m.Draining {
		return cell(m.Status) + " (draining)"
	}
	return cell(m.Status)
}

func memberRole(m httpclient.Member) string {
	switch {
	case m.Leader:
		return "leader"
	case m.Voter:
		return "voter"
	}
	return "non-voter"
}

func memberPartitions(m httpclient.Member) string {
	s := strconv.Itoa(m.OwnedPartitions)
	if m.OutboundMoves > 0 {
		s += fmt.Sprintf(" (%d moving out)", m.OutboundMoves)
	}
	return s
}

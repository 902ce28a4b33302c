package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// newClusterDecommissionCmd is `narad cluster decommission <node-id>`
// (api.md §8.2): mark a node draining, ask for the verdict, or cancel.
func newClusterDecommissionCmd(e *env, g *globals) *cobra.Command {
	var cancel, dryRun, asJSON bool
	c := &cobra.Command{
		Use:   "decommission <node-id>",
		Short: "Drain a node so it can leave the cluster (--dry-run: the verdict only; --cancel: undo)",
		Args:  exactArgs("node-id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cancel && dryRun {
				return usagef("--cancel and --dry-run cannot be used together")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			id := args[0]
			switch {
			case cancel:
				if err := cl.CancelDecommission(e.ctx, id); err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s is no longer draining\n", id)
			case dryRun:
				v, err := cl.DecommissionDryRun(e.ctx, id)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(e.stdout, v)
				}
				verdict := "no"
				if v.WouldDecommission {
					verdict = "yes"
				}
				fmt.Fprintf(e.stdout, "would decommission %s: %s\nvoter: %t\nowned partitions: %d\ninbound moves: %d\n",
					cell(v.Member), verdict, v.Voter, v.OwnedPartitions, v.InboundMoves)
				for _, r := range v.Reasons {
					fmt.Fprintf(e.stdout, "  %s: %s\n", cell(r.Code), cell(r.Message))
				}
			default:
				if err := cl.Decommission(e.ctx, id); err != nil {
					return refusedError(err)
				}
				fmt.Fprintf(e.stdout, "%s is draining: its partitions move to other nodes; it leaves the voters once it owns nothing (follow with `narad cluster members` and `narad cluster moves`)\n", id)
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&cancel, "cancel", false, "clear the drain mark")
	f.BoolVar(&dryRun, "dry-run", false, "only print whether the node could be decommissioned now, and why not")
	f.BoolVar(&asJSON, "json", false, "with --dry-run, print the verdict as JSON")
	return c
}

// refusedError turns a decommission refusal into a refusalError; other
// errors pass unchanged.
func refusedError(err error) error {
	var refused *httpclient.DecommissionRefused
	if errors.As(err, &refused) {
		return refusalError{refused}
	}
	return err
}

// refusalError prints a decommission refusal with one more line per
// reason, as `code: message`.
type refusalError struct {
	refused *httpclient.DecommissionRefused
}

func (r refusalError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "http %d: %s", httpclient.StatusOf(r.refused), cell(r.refused.Message))
	for _, re := range r.refused.Reasons {
		fmt.Fprintf(&b, "\n  %s: %s", cell(re.Code), cell(re.Message))
	}
	return b.String()
}

func (r refusalError) Unwrap() error { return r.refused }

// newClusterForgetCmd is `narad cluster members forget <node-id>`.
func newClusterForgetCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "forget <node-id>",
		Short: "Remove a Raft server that has no member record",
		Args:  exactArgs("node-id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			f, err := cl.ForgetMember(e.ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, f)
			}
			fmt.Fprintf(e.stdout, "forgot %s (voter: %t)\n", cell(f.ID), f.Voter)
			return nil
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON")
	return c
}

// newClusterMovesCmd is `narad cluster moves` and its `abort`.
func newClusterMovesCmd(e *env, g *globals) *cobra.Command {
	var asJSON, detail bool
	c := &cobra.Command{
		Use:   "moves",
		Short: "List the partitions being moved between nodes",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			moves, err := cl.Moves(e.ctx, detail)
			if err != nil {
				return err
			}
			if moves == nil {
				moves = []httpclient.Move{}
			}
			if asJSON {
				return printJSON(e.stdout, moves)
			}
			if len(moves) == 0 {
				fmt.Fprintln(e.stdout, "no partition is moving")
				return nil
			}
			return printMoves(e, moves, detail)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of moves")
	c.Flags().BoolVar(&detail, "detail", false, "also ask each destination for its move worker's report: phase, bytes copied")
	c.AddCommand(newClusterAbortCmd(e, g))
	return c
}

// printMoves prints the moves' table; with detail, the workers' phase and
// bytes copied, then a line for each worker's last error.
func printMoves(e *env, moves []httpclient.Move, detail bool) error {
	tw := newTable(e.stdout)
	head := "TOPIC\tPARTITION\tFROM\tTO\tBLOCKED"
	if detail {
		head += "\tPHASE\tCOPIED"
	}
	fmt.Fprintln(tw, head)
	for _, m := range moves {
		fmt.Fprintf(tw, "%s\t%d\t%s (%s)\t%s (%s)\t%s", cell(m.Topic), m.Partition,
			cell(m.From), cell(m.FromStatus), cell(m.To), cell(m.ToStatus), cell(m.Blocked))
		if detail {
			fmt.Fprintf(tw, "\t%s", moveWorker(m))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, m := range moves {
		if w := m.Worker; detail && w != nil && w.LastError != "" {
			fmt.Fprintf(e.stdout, "%s/%d: attempt %d: %s\n", cell(m.Topic), m.Partition, w.Attempts, cell(w.LastError))
		}
	}
	return nil
}

// moveWorker is a move's phase and copied cells, or why the worker's
// report could not be read.
func moveWorker(m httpclient.Move) string {
	w := m.Worker
	if w == nil {
		if m.WorkerError == "" {
			return "-\t-"
		}
		return cell("unknown: "+m.WorkerError) + "\t-"
	}
	phase := cell(w.Phase)
	if w.Blocked != "" {
		phase += " (" + cell(w.Blocked) + ")"
	}
	return phase + "\t" + formatBytes(w.CopiedBytes)
}

func newClusterAbortCmd(e *env, g *globals) *cobra.Command {
	var target string
	c := &cobra.Command{
		Use:   "abort <topic> <partition>",
		Short: "Cancel a partition's move: its owner keeps it",
		Args:  exactArgs("topic", "partition"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := strconv.Atoi(args[1])
			if err != nil || p < 0 {
				return usagef("partition must be a non-negative integer (got %q)", args[1])
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			a, err := cl.AbortMove(e.ctx, args[0], p, target)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "aborted the move of %s/%d from %s to %s: %s\n",
				cell(a.Move.Topic), a.Move.Partition, cell(a.Move.From), cell(a.Move.To), cell(a.Note))
			return nil
		},
	}
	c.Flags().StringVar(&target, "target", "", "abort only if the move goes to this node")
	return c
}

package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
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
					return err
				}
				fmt.Fprintf(e.stdout, "%s is draining: it refuses produces and takes no new partitions (check with `narad cluster members`)\n", id)
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
	var asJSON bool
	c := &cobra.Command{
		Use:   "moves",
		Short: "List the partitions being moved between nodes",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			moves, err := cl.Moves(e.ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, moves)
			}
			if len(moves) == 0 {
				fmt.Fprintln(e.stdout, "no partition is moving")
				return nil
			}
			tw := newTable(e.stdout)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO\tBLOCKED")
			for _, m := range moves {
				fmt.Fprintf(tw, "%s\t%d\t%s (%s)\t%s (%s)\t%s\n", cell(m.Topic), m.Partition,
					cell(m.From), cell(m.FromStatus), cell(m.To), cell(m.ToStatus), cell(m.Blocked))
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of moves")
	c.AddCommand(newClusterAbortCmd(e, g))
	return c
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

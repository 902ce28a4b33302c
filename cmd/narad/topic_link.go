package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// remoteOnlyFlags are the attach flags that make sense only with --remote.
var remoteOnlyFlags = []string{"remote-topic", "from", "lanes", "dry-run"}

func newTopicAttachCmd(e *env, g *globals) *cobra.Command {
	var a httpclient.RemoteAttach
	var delay durationMs
	c := &cobra.Command{
		Use:   "attach <parent> <child>",
		Short: "Attach a topic as a fan-out child, or with --remote create a remote child shipping to another cluster",
		Long: "Without --remote, attach links an existing topic as a fan-out child of parent (a delay\n" +
			"child with --delay) and prints the parent as JSON. With --remote, it creates <child> as\n" +
			"a remote child: a stub whose link ships the parent's records to a topic on that remote,\n" +
			"and prints the stub as JSON; --dry-run runs every check and prints the report instead.",
		Args: exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if delay.forever {
				return usagef("--delay takes a duration, not forever")
			}
			if a.Remote == "" {
				for _, name := range remoteOnlyFlags {
					if f.Changed(name) {
						return usagef("--%s needs --remote: it applies to remote children only", name)
					}
				}
			} else if err := checkRemoteAttach(cmd, a); err != nil {
				return err
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if a.Remote == "" {
				t, err := cl.AttachChild(e.ctx, args[0], args[1], delay.ms)
				if err != nil {
					return err
				}
				return printJSON(e.stdout, t)
			}
			a.Child, a.DelayMs = args[1], delay.ms
			return attachRemote(e, cl, args[0], a)
		},
	}
	f := c.Flags()
	f.Var(&delay, "delay", "make the child a delay child, e.g. 90s or 1h")
	f.StringVar(&a.Remote, "remote", "", "create <child> as a remote child shipping to this remote")
	f.StringVar(&a.RemoteTopic, "remote-topic", "", "the topic on the remote (default: the parent's name)")
	f.StringVar(&a.From, "from", "", "where the link starts: attach (default), unconsumed or earliest")
	f.IntVar(&a.Lanes, "lanes", 0, "ordered streams per parent partition, 1 to 8 (default 1)")
	f.BoolVar(&a.DryRun, "dry-run", false, "run every check and print the report, creating nothing")
	return c
}

// checkRemoteAttach refuses, before any request, a --from or --lanes the
// server would refuse (api.md §2.10.2).
func checkRemoteAttach(c *cobra.Command, a httpclient.RemoteAttach) error {
	f := c.Flags()
	if f.Changed("from") && a.From != "attach" && a.From != "unconsumed" && a.From != "earliest" {
		return usagef("--from must be attach, unconsumed or earliest (got %q)", a.From)
	}
	if f.Changed("lanes") && (a.Lanes < 1 || a.Lanes > 8) {
		return usagef("--lanes must be 1 to 8 (got %d)", a.Lanes)
	}
	return nil
}

// attachRemote creates the remote child, or runs the dry run, and prints
// the answer as JSON; its warnings also go to standard error.
func attachRemote(e *env, cl *httpclient.Client, parent string, a httpclient.RemoteAttach) error {
	res, err := cl.AttachRemoteChild(e.ctx, parent, a)
	if err != nil {
		return remoteError(err)
	}
	var answer any
	var warnings []string
	if res.DryRun != nil {
		answer, warnings = res.DryRun, res.DryRun.Warnings
	} else {
		answer, warnings = res.Created, res.Created.Warnings
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "narad: warning: %s\n", cell(w))
	}
	return printJSON(e.stdout, answer)
}

func newTopicDetachCmd(e *env, g *globals) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "detach <parent> <child>",
		Short: "Detach a child from its parent; a remote child's stub is deleted once nothing is left to ship",
		Args:  exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if err := cl.DetachChild(e.ctx, args[0], args[1], force); err != nil {
				return remoteError(err)
			}
			fmt.Fprintf(e.stdout, "%q detached from %q\n", args[1], args[0])
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "remote child: detach even with records not yet shipped, abandoning them")
	return c
}

func newTopicPauseCmd(e *env, g *globals) *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "pause <parent> <child>",
		Short: "Stop a remote child's sending (the parent's retention keeps aging its records) and print the stub",
		Args:  exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return remoteChildAction(e, g, func(cl *httpclient.Client) (*httpclient.Topic, error) {
				return cl.PauseRemoteChild(e.ctx, args[0], args[1], reason)
			})
		},
	}
	c.Flags().StringVar(&reason, "reason", "", "why, kept with the pause (at most 256 bytes of printable text)")
	return c
}

func newTopicResumeCmd(e *env, g *globals) *cobra.Command {
	var acceptTarget bool
	c := &cobra.Command{
		Use:   "resume <parent> <child>",
		Short: "Re-check a remote child's target and let it send; print the stub",
		Args:  exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return remoteChildAction(e, g, func(cl *httpclient.Client) (*httpclient.Topic, error) {
				return cl.ResumeRemoteChild(e.ctx, args[0], args[1], acceptTarget)
			})
		},
	}
	c.Flags().BoolVar(&acceptTarget, "accept-target", false, "accept a target topic recreated since the attach (records its new ID)")
	return c
}

func newTopicSkipCmd(e *env, g *globals) *cobra.Command {
	var partition int
	var offset int64
	c := &cobra.Command{
		Use:   "skip <parent> <child> --partition P --offset O",
		Short: "Let a remote child drop the one parent record it is stuck on; print the stub",
		Args:  exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if !f.Changed("partition") || !f.Changed("offset") {
				return usagef("skip needs --partition and --offset: the record the link is stuck on, its blocked_at in the parent's children list")
			}
			if partition < 0 || offset < 0 {
				return usagef("--partition and --offset must be >= 0")
			}
			return remoteChildAction(e, g, func(cl *httpclient.Client) (*httpclient.Topic, error) {
				return cl.SkipRemoteChild(e.ctx, args[0], args[1], partition, offset)
			})
		},
	}
	c.Flags().IntVar(&partition, "partition", 0, "the parent partition (required)")
	c.Flags().Int64Var(&offset, "offset", 0, "the offset of the record the link is stuck on (required)")
	return c
}

// remoteChildAction runs a pause, resume or skip and prints the stub as JSON.
func remoteChildAction(e *env, g *globals, act func(cl *httpclient.Client) (*httpclient.Topic, error)) error {
	cl, err := g.client(e)
	if err != nil {
		return err
	}
	t, err := act(cl)
	if err != nil {
		return remoteError(err)
	}
	return printJSON(e.stdout, t)
}

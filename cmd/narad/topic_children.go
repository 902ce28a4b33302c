package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain/remote"
)

func newTopicChildrenCmd(e *env, g *globals) *cobra.Command {
	var partitions bool
	c := &cobra.Command{
		Use:   "children <parent>",
		Short: "List a topic's children with their lag; remote children with their link state",
		Args:  exactArgs("parent"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			l, err := cl.ListChildren(e.ctx, args[0], partitions)
			if err != nil {
				return err
			}
			printChildren(e, l, partitions)
			return nil
		},
	}
	c.Flags().BoolVar(&partitions, "partitions", false, "add each remote child's rows per parent partition")
	return c
}

// printChildren prints one row per child and, with partitions, each
// remote child's partition rows under it.
func printChildren(e *env, l *httpclient.Children, partitions bool) {
	if len(l.Children) == 0 {
		fmt.Fprintf(e.stdout, "%q has no children\n", l.Parent)
		return
	}
	tw := newTable(e.stdout)
	fmt.Fprintln(tw, "CHILD\tKIND\tLAG\tSTATE\tLAG AGE\tBLOCKED AT")
	for _, c := range l.Children {
		lag := strconv.FormatInt(c.LagMessages, 10)
		if !c.LagComplete {
			lag = ">=" + lag
		}
		kind, state, age, blocked := "fan-out", "-", "-", "-"
		if c.DelayMs > 0 {
			kind = "delay " + formatMs(c.DelayMs)
		}
		if c.IsRemote() {
			kind, state, age = "remote", c.State, formatMs(c.LagSeconds*1000)
			if c.Unverified {
				state += " (unverified)"
			}
			if b := c.BlockedAt; b != nil {
				blocked = fmt.Sprintf("%d@%d %s", b.Partition, b.Offset, b.State)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(c.Name), kind, lag, cell(state), age, blocked)
	}
	_ = tw.Flush()
	if !partitions {
		return
	}
	for _, c := range l.Children {
		if !c.IsRemote() || len(c.Partitions) == 0 {
			continue
		}
		fmt.Fprintf(e.stdout, "\n%s:\n", cell(c.Name))
		tw := newTable(e.stdout)
		fmt.Fprintln(tw, "PARTITION\tNODE\tSTART\tNEXT\tHWM\tACKED\tSTATE\tLAST SUCCESS")
		for _, p := range c.Partitions {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Partition, cell(p.Node), optInt(p.StartOffset), optInt(p.NextOffset),
				optInt(p.HighWatermark), optInt(p.AckFrontier), cell(p.State), optString(p.LastSuccessAt))
		}
		_ = tw.Flush()
	}
}

func optInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func optString(v *string) string {
	if v == nil {
		return "-"
	}
	return cell(*v)
}

// waitOptions are narad topic wait's flags.
type waitOptions struct {
	lagZero, sourceDrained    bool
	stable, timeout, interval time.Duration
}

// exitStalled is topic wait's exit code for a link stalled in a state
// needing a fix (api.md §8.2).
const exitStalled = 2

func newTopicWaitCmd(e *env, g *globals) *cobra.Command {
	o := waitOptions{timeout: 30 * time.Minute, interval: 2 * time.Second}
	c := &cobra.Command{
		Use:   "wait <parent> <child> (--lag-zero | --source-drained)",
		Short: "Wait until a child has caught up with its parent (or a remote child's source is drained)",
		Long: "wait polls the parent's children listing until the condition holds for --stable in a row.\n" +
			"Exit status: 0 when it holds, 1 on --timeout or an error, 2 when a remote child's link is\n" +
			"stalled in a state that needs a fix (the state is printed).",
		Args: exactArgs("parent", "child"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.lagZero == o.sourceDrained {
				return usagef("wait needs exactly one of --lag-zero and --source-drained")
			}
			if o.interval <= 0 || o.timeout <= 0 || o.stable < 0 {
				return usagef("--interval and --timeout must be positive, --stable not negative")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			return waitChild(e, cl, args[0], args[1], o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.lagZero, "lag-zero", false, "wait until every parent record has been copied (remote: accepted by the target)")
	f.BoolVar(&o.sourceDrained, "source-drained", false, "remote child: wait until the parent's consumers have acked past the link's start")
	f.DurationVar(&o.stable, "stable", 0, "how long the condition must hold in a row")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "give up after this long (exit 1)")
	f.DurationVar(&o.interval, "interval", o.interval, "time between two polls")
	return c
}

// errWaitTimeout is topic wait's timeout.
var errWaitTimeout = errors.New("timed out")

// waitChild polls until o's condition has held for o.stable, printing a
// progress line to standard error whenever what it sees changes.
func waitChild(e *env, cl *httpclient.Client, parent, child string, o waitOptions) error {
	deadline := time.Now().Add(o.timeout)
	var metSince time.Time
	last := ""
	for {
		c, err := readChild(e, cl, parent, child)
		if err != nil {
			return err
		}
		if o.sourceDrained && !c.IsRemote() {
			return usagef("--source-drained applies to remote children; %q is not one", child)
		}
		if line := progressLine(c); line != last {
			fmt.Fprintf(e.stderr, "%s: %s\n", cell(child), line)
			last = line
		}
		if c.IsRemote() {
			if st, ok := remote.ParseState(c.State); ok && st.NeedsFix() {
				return exitError{code: exitStalled, err: fmt.Errorf("%q is stalled in state %s: it needs a fix (see docs/remotes.md)", child, c.State)}
			}
		}
		met := (o.lagZero && c.LagComplete && c.LagMessages == 0) || (o.sourceDrained && c.SourceDrained)
		now := time.Now()
		switch {
		case !met:
			metSince = time.Time{}
		case metSince.IsZero():
			metSince = now
		}
		if met && now.Sub(metSince) >= o.stable {
			fmt.Fprintf(e.stdout, "%s: %s\n", cell(child), conditionName(o))
			return nil
		}
		if now.Add(o.interval).After(deadline) {
			return fmt.Errorf("%q: %w after %s waiting for %s", child, errWaitTimeout, o.timeout, conditionName(o))
		}
		select {
		case <-e.ctx.Done():
			return e.ctx.Err()
		case <-time.After(o.interval):
		}
	}
}

func conditionName(o waitOptions) string {
	if o.lagZero {
		return "lag is zero"
	}
	return "source drained"
}

// readChild reads child's row of parent's listing.
func readChild(e *env, cl *httpclient.Client, parent, child string) (httpclient.Child, error) {
	l, err := cl.ListChildren(e.ctx, parent, false)
	if err != nil {
		return httpclient.Child{}, err
	}
	for _, c := range l.Children {
		if c.Name == child {
			return c, nil
		}
	}
	return httpclient.Child{}, fmt.Errorf("%q is not a child of %q", child, parent)
}

func progressLine(c httpclient.Child) string {
	lag := fmt.Sprintf("lag %d messages", c.LagMessages)
	if !c.LagComplete {
		lag = fmt.Sprintf("lag at least %d messages (not every partition reported)", c.LagMessages)
	}
	if !c.IsRemote() {
		return lag
	}
	return fmt.Sprintf("%s, state %s, source drained %v", lag, c.State, c.SourceDrained)
}

// exitError ends a command with code after printing err.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

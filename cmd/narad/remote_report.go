package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

func newRemoteLsCmd(e *env, g *globals) *cobra.Command {
	var noNodes, asJSON bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List the remotes with each node's credential state",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			list, err := cl.ListRemotes(e.ctx, !noNodes)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, list)
			}
			return printRemotes(e.stdout, list, !noNodes)
		},
	}
	c.Flags().BoolVar(&noNodes, "no-nodes", false, "do not ask the members for their credential state")
	c.Flags().BoolVar(&asJSON, "json", false, "print the whole answer as JSON")
	return c
}

// printRemotes prints a table of the remotes, then the sealing key, the
// lingering remotes and the members that did not answer.
func printRemotes(w io.Writer, list *httpclient.RemoteList, nodes bool) error {
	tw := newTable(w)
	head := "NAME\tURL\tUSERNAME\tCREDENTIAL\tFINGERPRINT\tLINKS"
	if nodes {
		head += "\tNODES"
	}
	fmt.Fprintln(tw, head)
	for _, r := range list.Remotes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d", cell(r.Name), cell(r.URL), cell(r.Username), r.CredentialVersion, cell(r.Password.Fingerprint), len(r.Links))
		if nodes {
			fmt.Fprintf(tw, "\t%s", nodeStates(r.Nodes))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if k := list.Key; k != nil {
		fmt.Fprintf(w, "sealing key %s, first sealed %s, %s old\n", cell(k.KeyVersion), cell(k.FirstSealedAt), formatMs(k.AgeSeconds*1000))
	}
	if len(list.Lingering) > 0 {
		fmt.Fprintf(w, "deleted but still held by a member: %s\n", cell(strings.Join(list.Lingering, ", ")))
	}
	if len(list.NotAnswering) > 0 {
		fmt.Fprintf(w, "not answering: %s\n", cell(strings.Join(list.NotAnswering, ", ")))
	}
	return nil
}

// nodeStates renders the members' views as "n1=ready n2=stale(auth_failed)".
func nodeStates(nodes []httpclient.RemoteNode) string {
	parts := make([]string, 0, len(nodes))
	for _, n := range nodes {
		s := n.Node + "=" + n.State
		if n.LastError != "" && n.LastError != "none" {
			s += "(" + n.LastError + ")"
		}
		parts = append(parts, s)
	}
	return cell(strings.Join(parts, " "))
}

func newRemoteTestCmd(e *env, g *globals) *cobra.Command {
	var spec httpclient.RemoteTestSpec
	var asJSON bool
	c := &cobra.Command{
		Use:   "test <name> --topic TOPIC",
		Short: "Run the attach checks against a topic on the remote; exits 1 unless they pass",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if spec.Topic == "" {
				return usagef("remote test needs --topic: the topic on the remote to check")
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			res, err := cl.TestRemote(e.ctx, args[0], spec)
			if err != nil {
				return remoteError(err)
			}
			if asJSON {
				err = printJSON(e.stdout, res)
			} else {
				err = printRemoteTest(e.stdout, spec, res)
			}
			if err == nil && !res.Passed() {
				err = fmt.Errorf("remote %q failed the test: %s", args[0], cell(res.Class))
			}
			return err
		},
	}
	c.Flags().StringVar(&spec.Topic, "topic", "", "the topic on the remote (required)")
	c.Flags().StringVar(&spec.Source, "source", "", "a local parent topic: adds the schema, source and loop checks")
	c.Flags().BoolVar(&asJSON, "json", false, "print the verdict as JSON")
	return c
}

func printRemoteTest(w io.Writer, spec httpclient.RemoteTestSpec, res *httpclient.RemoteTest) error {
	verdict := res.Result
	if res.Class != "" {
		verdict += " (" + res.Class + ")"
	}
	fmt.Fprintf(w, "remote %q, topic %q: %s\n", res.Remote, spec.Topic, cell(verdict))
	return printReports(w, res.Checks)
}

// printReports prints the members' check reports as a table, or nothing
// when there are none.
func printReports(w io.Writer, checks []httpclient.MemberReport) error {
	if len(checks) == 0 {
		return nil
	}
	tw := newTable(w)
	fmt.Fprintln(tw, "NODE\tRESULT\tCLASS\tRTT\tWARNINGS")
	for _, r := range checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%dms\t%s\n", cell(r.Node), cell(r.Result), cell(r.Class), r.RTTMs, cell(strings.Join(r.Warnings, "; ")))
	}
	return tw.Flush()
}

func newRemoteReencryptCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "reencrypt",
		Short: "Re-seal every remote password under the current cluster secret; exits 1 if any failed",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			res, err := cl.ReencryptRemotes(e.ctx)
			if err != nil {
				return remoteError(err)
			}
			if asJSON {
				err = printJSON(e.stdout, res)
			} else {
				err = printReencrypted(e.stdout, res)
			}
			if err == nil && len(res.Failed) > 0 {
				err = fmt.Errorf("%d remote(s) could not be re-encrypted", len(res.Failed))
			}
			return err
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the answer as JSON")
	return c
}

func printReencrypted(w io.Writer, res *httpclient.Reencrypted) error {
	fmt.Fprintf(w, "key version: %s\n", cell(res.KeyVersion))
	fmt.Fprintf(w, "re-encrypted: %s\n", cell(strings.Join(res.Reencrypted, ", ")))
	fmt.Fprintf(w, "already current: %s\n", cell(strings.Join(res.AlreadyCurrent, ", ")))
	for _, f := range res.Failed {
		fmt.Fprintf(w, "failed: %s (%s)\n", cell(f.Name), cell(f.Reason))
	}
	return nil
}

// remoteError prints a refusal's details on lines of their own after the
// server's message; other errors pass unchanged.
func remoteError(err error) error {
	var r *httpclient.RemoteRefusal
	if errors.As(err, &r) {
		return remoteRefusalError{r}
	}
	return err
}

type remoteRefusalError struct {
	r *httpclient.RemoteRefusal
}

func (e remoteRefusalError) Unwrap() error { return e.r }

func (e remoteRefusalError) Error() string {
	r := e.r
	var b strings.Builder
	b.WriteString(r.Error())
	line := func(format string, args ...any) { b.WriteString("\n  " + fmt.Sprintf(format, args...)) }
	if r.Class != "" {
		line("class: %s", cell(r.Class))
	}
	for _, c := range r.Checks {
		line("%s: %s", cell(c.Node), cell(strings.TrimSpace(c.Result+" "+c.Class)))
	}
	for _, l := range r.Links {
		line("used by %s", cell(l))
	}
	if r.LagMessages != nil {
		lag := strconv.FormatInt(*r.LagMessages, 10)
		if !r.LagComplete {
			lag = "at least " + lag
		}
		line("unshipped: %s message(s); --force abandons them", lag)
	}
	for _, node := range slices.Sorted(maps.Keys(r.DispatchBacklog)) {
		line("%s holds %d accepted record(s)", cell(node), r.DispatchBacklog[node])
	}
	if len(r.NotAnswering) > 0 {
		line("not answering: %s", cell(strings.Join(r.NotAnswering, ", ")))
	}
	if a := r.BlockedAt; a != nil {
		line("blocked at partition %d offset %d (%s)", a.Partition, a.Offset, cell(a.State))
	}
	return b.String()
}

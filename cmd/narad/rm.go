package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// rmSpec is one delete command: what it deletes and how.
type rmSpec struct {
	use, arg, short string
	kind            string // "topic", "user": names the thing in messages
	question        string // the prompt, with %q for the name
	remove          func(cl *httpclient.Client, name string) error
}

// newRmCmd is a delete command that asks first (on standard error, reading
// y or yes from standard input) unless -f is given.
func newRmCmd(e *env, g *globals, s rmSpec) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   s.use,
		Short: s.short,
		Args:  exactArgs(s.arg),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if !force {
				fmt.Fprintf(e.stderr, s.question, name)
				answer, _ := e.stdin.ReadString('\n')
				if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
					return fmt.Errorf("%s %q not deleted", s.kind, name)
				}
			}
			if err := s.remove(cl, name); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s %q deleted\n", s.kind, name)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "delete without asking")
	return c
}

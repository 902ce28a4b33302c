package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// completionTimeout bounds the topic list a shell completion asks for: a
// slow or absent server must not freeze the user's prompt.
const completionTimeout = 2 * time.Second

// topicNamedSubcommands are the `narad topic` commands whose first
// argument is an existing topic (add names a new one).
var topicNamedSubcommands = []string{"info", "edit", "schema", "rm", "attach", "detach", "pause", "resume", "skip"}

// pairSubcommands take <parent> <child>. The child of attach is any topic
// (or a new remote child, which no list can offer); of the others, one of
// the parent's children.
var pairSubcommands = []string{"attach", "detach", "pause", "resume", "skip"}

// addTopicCompletion gives every command whose first argument is an
// existing topic a completion of the topic names the server lists, through
// `narad completion <shell>`.
func addTopicCompletion(c *cobra.Command, e *env, g *globals) {
	if takesTopic(c) {
		c.ValidArgsFunction = topicCompleter(e, g)
	}
	for _, sub := range c.Commands() {
		addTopicCompletion(sub, e, g)
	}
}

func takesTopic(c *cobra.Command) bool {
	fields := strings.Fields(c.Use)
	if len(fields) > 1 && fields[1] == "<topic>" {
		return true
	}
	return isTopicSubcommand(c, topicNamedSubcommands)
}

func isTopicSubcommand(c *cobra.Command, names []string) bool {
	return c.HasParent() && c.Parent().Name() == "topic" && slices.Contains(names, c.Name())
}

// topicCompleter completes an argument with the names that start with what
// was typed: the first with the server's topics, the second of attach with
// them too, the second of detach, pause, resume and skip with the parent's
// children; with no server, nothing.
func topicCompleter(e *env, g *globals) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var names []string
		for _, n := range candidateNames(e, g, cmd, args) {
			if strings.HasPrefix(n, toComplete) {
				names = append(names, n)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// candidateNames lists what the next argument may be, or nothing when the
// command takes no more topics or the server does not answer in time.
func candidateNames(e *env, g *globals, cmd *cobra.Command, args []string) []string {
	if len(args) > 1 || len(args) == 1 && !isTopicSubcommand(cmd, pairSubcommands) {
		return nil
	}
	cl, err := g.client(e)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(e.ctx, completionTimeout)
	defer cancel()
	if len(args) == 1 && cmd.Name() != "attach" {
		parent, err := cl.Topic(ctx, args[0])
		if err != nil {
			return nil
		}
		return parent.Children
	}
	topics, err := cl.ListTopics(ctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(topics))
	for _, t := range topics {
		names = append(names, t.Name)
	}
	return names
}

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

// topicNamedSubcommands are the `narad topic` commands whose argument is an
// existing topic (add names a new one).
var topicNamedSubcommands = []string{"info", "edit", "schema", "rm"}

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
	return c.HasParent() && c.Parent().Name() == "topic" && slices.Contains(topicNamedSubcommands, c.Name())
}

// topicCompleter completes the first argument with the names of the
// server's topics that start with what was typed; with no server, nothing.
func topicCompleter(e *env, g *globals) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cl, err := g.client(e)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(e.ctx, completionTimeout)
		defer cancel()
		topics, err := cl.ListTopics(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for _, t := range topics {
			if strings.HasPrefix(t.Name, toComplete) {
				names = append(names, t.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

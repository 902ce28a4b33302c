package main

import (
	"errors"
	"syscall"

	"github.com/spf13/cobra"
)

// hintNoServer follows a client command that found nothing listening.
const hintNoServer = "no Narad server answers there. Start one with `narad server start --dev` (a local node, security off), " +
	"or point the CLI at a running node with -s host:port, NARAD_ADDR or `narad ctx`."

// annotationServerCmd marks the commands that run a node.
const annotationServerCmd = "narad/server"

// hintFor is a line of advice for an error a newcomer is likely to meet,
// or "" when there is none. Server commands report their own start-up
// failures (bootstrap explains them), so they get no client hint.
func hintFor(cmd *cobra.Command, err error) string {
	if cmd == nil || cmd.Annotations[annotationServerCmd] != "" {
		return ""
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return hintNoServer
	}
	return ""
}

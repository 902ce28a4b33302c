package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	quietSysmon(os.Args[1:])
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args with the process's standard input and
// environment, and returns the exit code: 0 success, 1 failure, 2 misuse.
// An interrupt cancels the running command.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(systemEnv(ctx, stdout, stderr), args)
}

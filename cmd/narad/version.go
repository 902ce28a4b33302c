package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/narad/narad/bootstrap"
)

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON for scripts")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	info := bootstrap.Build()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(info); err != nil {
			fmt.Fprintln(stderr, "narad version:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stdout, "version: %s\ncommit:  %s\ngo:      %s\n", info.Version, info.Commit, info.GoVersion)
	return 0
}

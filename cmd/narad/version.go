package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/narad/narad/bootstrap"
)

func newVersionCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return c
}

func printVersion(w io.Writer, asJSON bool) error {
	info := bootstrap.Build()
	if asJSON {
		return json.NewEncoder(w).Encode(info)
	}
	_, err := fmt.Fprintf(w, "version: %s\ncommit:  %s\ngo:      %s\n", info.Version, info.Commit, info.GoVersion)
	return err
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/narad/narad/bootstrap"
	"github.com/narad/narad/bootstrap/config"
)

// devPortDefault is the port `server start` listens on (api.md §8.2).
const devPortDefault = 7942

// configReferenceDoc is where the configuration reference lives.
const configReferenceDoc = "docs/configuration.md in Narad's repository"

// newServeCmd is `narad serve`: run a node from the config file, the
// environment and these flags (the container entrypoint).
func newServeCmd(e *env) *cobra.Command {
	var file string
	set := map[string]*string{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run a Narad node (config file, NARAD_* environment, flags)",
		Long: "Run a Narad node. Settings come from the built-in defaults, the JSON file of --config,\n" +
			"the NARAD_* environment variables and these flags, each overriding the one before.\n" +
			"Every key, its default and its variable: " + configReferenceDoc + ".\n\n" +
			"Security is on: set NARAD_ADMIN_PASSWORD, or read the generated one from <data>/admin-password.",
		Annotations: map[string]string{annotationServerCmd: "serve"},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := map[string]string{}
			for key, v := range set {
				if cmd.Flags().Changed(flagName(key)) {
					flags[key] = *v
				}
			}
			if cmd.Flags().Changed("port") {
				if _, ok := flags["http.addr"]; !ok {
					flags["http.addr"] = config.PortAddr(*set["port"])
				}
			}
			delete(flags, "port")
			if cmd.Flags().Changed("cluster-port") {
				flags["cluster.addr"] = config.PortAddr(*set["cluster-port"])
			}
			delete(flags, "cluster-port")
			return bootstrap.Run(e.ctx, bootstrap.RunParams{
				Source: config.Source{File: file, Env: os.LookupEnv, Flags: flags},
				Stderr: e.stderr,
			})
		},
	}
	c.Flags().StringVar(&file, "config", "", "JSON config file (strict: unknown keys refused)")
	for key, help := range map[string]string{
		"http.addr": "client API listen address (overrides --port)", "port": "client API port",
		"cluster-port": "Raft port", "cluster.node_id": "this node's id", "storage.data_dir": "data directory",
		"log.level": "debug, info, warn or error", "log.format": "json or text", "http.pprof_addr": "pprof listener (off when empty)",
	} {
		v := new(string)
		set[key] = v
		c.Flags().StringVar(v, flagName(key), "", help)
	}
	return c
}

// flagName maps a setting key to its serve flag (api.md §8.2).
func flagName(key string) string {
	switch key {
	case "http.addr":
		return "addr"
	case "cluster.node_id":
		return "node-id"
	case "storage.data_dir":
		return "data-dir"
	case "log.level":
		return "log-level"
	case "log.format":
		return "log-format"
	case "http.pprof_addr":
		return "pprof-addr"
	}
	return key
}

// newServerStartCmd is `narad server start`: with --dev, one node on
// loopback with security off, text logs and data in ~/.narad/data.
func newServerStartCmd(e *env) *cobra.Command {
	var dev bool
	var port int
	var dataDir string
	c := &cobra.Command{
		Use:   "start",
		Short: "Run a node; --dev: loopback only, auth off, data in ~/.narad/data",
		Long: "Run a node on --port (the client API; Raft uses port+1). With --dev: loopback only,\n" +
			"security off, text logs, data in ~/.narad/data. For every setting, see `narad serve --help`\n" +
			"and " + configReferenceDoc + ".",
		Annotations: map[string]string{annotationServerCmd: "start"},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags := map[string]string{"http.addr": "127.0.0.1:" + strconv.Itoa(port)}
			if dev {
				flags = devFlags(e, port)
			}
			if dataDir != "" {
				flags["storage.data_dir"] = dataDir
			} else if dev {
				home, err := os.UserHomeDir()
				if err != nil {
					return fmt.Errorf("find the home directory for ~/.narad/data (or pass --data-dir): %w", err)
				}
				flags["storage.data_dir"] = filepath.Join(home, ".narad", "data")
			}
			return bootstrap.Run(e.ctx, bootstrap.RunParams{
				Source: config.Source{Env: os.LookupEnv, Flags: flags}, Dev: dev, Stderr: e.stderr,
			})
		},
	}
	c.Flags().BoolVar(&dev, "dev", false, "development mode: bind 127.0.0.1 only, security off, text logs")
	c.Flags().IntVar(&port, "port", devPortDefault, "client API port (Raft uses port+1)")
	c.Flags().StringVar(&dataDir, "data-dir", "", "data directory (default ~/.narad/data with --dev)")
	return c
}

// devFlags are the settings --dev forces (api.md §8.2).
func devFlags(e *env, port int) map[string]string {
	flags := map[string]string{
		"http.addr":        "127.0.0.1:" + strconv.Itoa(port),
		"security.enabled": "false",
		"log.format":       "text",
		"cluster.node_id":  "dev",
	}
	if e.getenv("NARAD_CLUSTER_ADDR") == "" {
		flags["cluster.addr"] = "127.0.0.1:" + strconv.Itoa(port+1)
	}
	return flags
}

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/spf13/cobra"
)

// contextFileName is the file holding saved contexts (api.md §8.1).
const contextFileName = "contexts.json"

// errNoConfigDir means neither NARAD_CONFIG_DIR nor a user config directory is known.
var errNoConfigDir = errors.New("no configuration directory: set " + envConfigDir)

// contextEntry is one saved server and its credentials.
type contextEntry struct {
	Server   string `json:"server"`
	User     string `json:"user,omitempty"`
	Password string `json:"password,omitempty"`
}

// contextFile is the shape of contexts.json.
type contextFile struct {
	Current  string                  `json:"current"`
	Contexts map[string]contextEntry `json:"contexts"`
}

var contextNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// contextPath is $NARAD_CONFIG_DIR/contexts.json, else <user config dir>/narad/contexts.json.
func contextPath(e *env) (string, error) {
	if dir := e.getenv(envConfigDir); dir != "" {
		return filepath.Join(dir, contextFileName), nil
	}
	base, err := e.userConfigDir()
	if err != nil || base == "" {
		return "", errNoConfigDir
	}
	return filepath.Join(base, "narad", contextFileName), nil
}

// loadContexts reads the file; a missing file is an empty one.
func loadContexts(e *env) (contextFile, string, error) {
	path, err := contextPath(e)
	if err != nil {
		return contextFile{}, "", err
	}
	cf := contextFile{Contexts: map[string]contextEntry{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cf, path, nil
	}
	if err != nil {
		return cf, path, fmt.Errorf("read contexts: %w", err)
	}
	if err := json.Unmarshal(b, &cf); err != nil {
		return cf, path, fmt.Errorf("read contexts %s: %w", path, err)
	}
	if cf.Contexts == nil {
		cf.Contexts = map[string]contextEntry{}
	}
	return cf, path, nil
}

// saveContexts writes the file atomically, mode 0600 in a 0700 directory.
func saveContexts(path string, cf contextFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	b, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".contexts-*.json")
	if err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("save contexts: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save contexts: %w", err)
	}
	return nil
}

func newCtxCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("ctx", "Manage saved servers and credentials (contexts)")
	c.AddCommand(newCtxAddCmd(e, g), newCtxSelectCmd(e), newCtxLsCmd(e), newCtxRmCmd(e))
	return c
}

// updateContexts loads the file, applies fn and saves the result.
func updateContexts(e *env, fn func(*contextFile) error) error {
	cf, path, err := loadContexts(e)
	if err != nil {
		return err
	}
	if err := fn(&cf); err != nil {
		return err
	}
	return saveContexts(path, cf)
}

func newCtxAddCmd(e *env, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "add <name> --server URL [--user U] [--password P | --password-stdin]",
		Short: "Save a context; the first one saved becomes current",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if !contextNameRE.MatchString(name) {
				return usagef("context name %q: want 1-64 characters from A-Z a-z 0-9 . _ -", name)
			}
			if g.server == "" {
				return usagef("ctx add needs --server")
			}
			if g.password != "" && g.passwordStdin {
				return usagef("--password and --password-stdin are mutually exclusive")
			}
			if _, err := newClient(e, target{servers: []string{g.server}}); err != nil {
				return err
			}
			entry := contextEntry{Server: g.server, User: g.user, Password: g.password}
			if g.passwordStdin {
				pw, err := readPasswordLine(e.stdin)
				if err != nil {
					return err
				}
				entry.Password = pw
			}
			became := false
			err := updateContexts(e, func(cf *contextFile) error {
				cf.Contexts[name] = entry
				if cf.Current == "" {
					cf.Current, became = name, true
				}
				return nil
			})
			if err != nil {
				return err
			}
			if became {
				fmt.Fprintf(e.stdout, "context %q saved and selected\n", name)
			} else {
				fmt.Fprintf(e.stdout, "context %q saved\n", name)
			}
			return nil
		},
	}
}

func newCtxSelectCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "select <name>",
		Short: "Make a saved context the current one",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := updateContexts(e, func(cf *contextFile) error {
				if _, ok := cf.Contexts[args[0]]; !ok {
					return fmt.Errorf("context %q not found (see narad ctx ls)", args[0])
				}
				cf.Current = args[0]
				return nil
			})
			if err == nil {
				fmt.Fprintf(e.stdout, "current context: %s\n", args[0])
			}
			return err
		},
	}
}

func newCtxLsCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List saved contexts; * marks the current one",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cf, _, err := loadContexts(e)
			if err != nil {
				return err
			}
			names := make([]string, 0, len(cf.Contexts))
			for n := range cf.Contexts {
				names = append(names, n)
			}
			sort.Strings(names)
			tw := newTable(e.stdout)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tUSER")
			for _, n := range names {
				mark := ""
				if n == cf.Current {
					mark = "*"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", mark, n, cf.Contexts[n].Server, cf.Contexts[n].User)
			}
			return tw.Flush()
		},
	}
}

func newCtxRmCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "rm <name>",
		Short: "Remove a saved context",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := updateContexts(e, func(cf *contextFile) error {
				if _, ok := cf.Contexts[args[0]]; !ok {
					return fmt.Errorf("context %q not found (see narad ctx ls)", args[0])
				}
				delete(cf.Contexts, args[0])
				if cf.Current == args[0] {
					cf.Current = ""
				}
				return nil
			})
			if err == nil {
				fmt.Fprintf(e.stdout, "context %q removed\n", args[0])
			}
			return err
		},
	}
}

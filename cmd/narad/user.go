package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

func newUserCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("user", "Create, list, change and delete users (admin)", "users")
	c.AddCommand(newUserAddCmd(e, g), newUserGrantCmd(e, g), newUserLsCmd(e, g), newUserGetCmd(e, g), newUserRmCmd(e, g), newUserPasswdCmd(e, g))
	return c
}

// secretFlag is a password a command takes inline (--<name>) or from the
// first line of standard input (--<name>-stdin). Its value never appears in
// an error message.
type secretFlag struct {
	name  string
	what  string
	value string
	stdin bool
}

func (s *secretFlag) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&s.value, s.name, "", s.what+" (visible to other local users; prefer --"+s.name+"-stdin)")
	f.BoolVar(&s.stdin, s.name+"-stdin", false, "read "+s.what+" from the first line of standard input")
}

// check refuses both forms at once, an empty inline value, and (when
// required) neither form.
func (s *secretFlag) check(c *cobra.Command, required bool) error {
	inline := c.Flags().Changed(s.name)
	switch {
	case inline && s.stdin:
		return usagef("--%s and --%s-stdin are mutually exclusive", s.name, s.name)
	case inline && s.value == "":
		return usagef("--%s is empty", s.name)
	case required && !inline && !s.stdin:
		return usagef("%s needs --%s-stdin or --%s", c.CommandPath(), s.name, s.name)
	}
	return nil
}

// given reports whether either form was used.
func (s *secretFlag) given(c *cobra.Command) bool { return s.stdin || c.Flags().Changed(s.name) }

// read returns the inline value, or the first line of standard input without
// its line end.
func (s *secretFlag) read(e *env) (string, error) {
	if !s.stdin {
		return s.value, nil
	}
	line, err := e.stdin.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", fmt.Errorf("--%s-stdin: no password on standard input", s.name)
	}
	if line = strings.TrimRight(line, "\r\n"); line == "" {
		return "", fmt.Errorf("--%s-stdin: the first line of standard input is empty", s.name)
	}
	return line, nil
}

// oneStdinPassword refuses a call that would read two passwords from
// standard input: it has only one first line.
func oneStdinPassword(g *globals, secrets ...*secretFlag) error {
	var readers []string
	if g.passwordStdin {
		readers = append(readers, "--password-stdin")
	}
	for _, s := range secrets {
		if s.stdin {
			readers = append(readers, "--"+s.name+"-stdin")
		}
	}
	if len(readers) > 1 {
		return usagef("%s cannot be used together: only one password can be read from standard input", strings.Join(readers, " and "))
	}
	return nil
}

// parseGrant turns "action:pat1,pat2" or "admin" into a grant.
func parseGrant(s string) (httpclient.Grant, error) {
	action, list, hasColon := strings.Cut(s, ":")
	action = strings.TrimSpace(action)
	switch {
	case action == "":
		return httpclient.Grant{}, usagef("--grant %q: empty action; want action:pattern[,pattern...] or admin", s)
	case action == "admin" && hasColon:
		return httpclient.Grant{}, usagef("--grant %q: admin grants are global and take no patterns; write --grant admin", s)
	case action == "admin":
		return httpclient.Grant{Action: action}, nil
	case !hasColon || strings.TrimSpace(list) == "":
		return httpclient.Grant{}, usagef("--grant %q: %s needs at least one topic pattern, e.g. %s:orders-*", s, action, action)
	}
	g := httpclient.Grant{Action: action}
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return httpclient.Grant{}, usagef("--grant %q: empty pattern", s)
		}
		g.Patterns = append(g.Patterns, p)
	}
	return g, nil
}

func parseGrants(flags []string) ([]httpclient.Grant, error) {
	var out []httpclient.Grant
	for _, f := range flags {
		g, err := parseGrant(f)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// grantsText renders grants in the --grant syntax, space-separated.
func grantsText(grants []httpclient.Grant) string {
	parts := make([]string, 0, len(grants))
	for _, g := range grants {
		if len(g.Patterns) == 0 {
			parts = append(parts, g.Action)
			continue
		}
		parts = append(parts, g.Action+":"+strings.Join(g.Patterns, ","))
	}
	return dash(strings.Join(parts, " "))
}

const grantUsage = `grant as action:pattern[,pattern...] (produce, consume, create) or admin; repeatable`

func newUserAddCmd(e *env, g *globals) *cobra.Command {
	pw := &secretFlag{name: "user-password", what: "the new user's password"}
	var grantFlags []string
	c := &cobra.Command{
		Use:   "add <username>",
		Short: "Create a user and print it as JSON",
		Args:  exactArgs("username"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := pw.check(cmd, true); err != nil {
				return err
			}
			if err := oneStdinPassword(g, pw); err != nil {
				return err
			}
			grants, err := parseGrants(grantFlags)
			if err != nil {
				return err
			}
			password, err := pw.read(e)
			if err != nil {
				return err
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			u, err := cl.CreateUser(e.ctx, httpclient.NewUser{Username: args[0], Password: password, Grants: grants})
			if err != nil {
				return err
			}
			return printJSON(e.stdout, u)
		},
	}
	pw.register(c)
	c.Flags().StringArrayVar(&grantFlags, "grant", nil, grantUsage)
	return c
}

func newUserGrantCmd(e *env, g *globals) *cobra.Command {
	var grantFlags []string
	var none bool
	c := &cobra.Command{
		Use:   "grant <username> (--grant action:patterns ... | --none)",
		Short: "Replace every grant of a user and print the user as JSON",
		Args:  exactArgs("username"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case none && len(grantFlags) > 0:
				return usagef("--none and --grant are mutually exclusive")
			case !none && len(grantFlags) == 0:
				return usagef("give the new grants with --grant (repeatable), or --none to remove every grant")
			}
			grants, err := parseGrants(grantFlags)
			if err != nil {
				return err
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			u, err := cl.SetGrants(e.ctx, args[0], grants)
			if err != nil {
				return err
			}
			return printJSON(e.stdout, u)
		},
	}
	c.Flags().StringArrayVar(&grantFlags, "grant", nil, grantUsage+"; replaces the whole set")
	c.Flags().BoolVar(&none, "none", false, "remove every grant")
	return c
}

func newUserLsCmd(e *env, g *globals) *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "ls",
		Short: "List users",
		Args:  exactArgs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			users, err := cl.ListUsers(e.ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(e.stdout, users)
			}
			tw := newTable(e.stdout)
			fmt.Fprintln(tw, "USERNAME\tROOT\tGRANTS\tUPDATED")
			for _, u := range users {
				root := "-"
				if u.Root {
					root = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Username, root, grantsText(u.Grants), msTime(max(u.UpdatedAtMs, u.CreatedAtMs)))
			}
			return tw.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of user objects")
	return c
}

// msTime renders Unix milliseconds as local RFC 3339, "-" for 0.
func msTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Local().Format(time.RFC3339)
}

func newUserGetCmd(e *env, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "get <username>",
		Short: "Print one user as JSON",
		Args:  exactArgs("username"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			u, err := cl.User(e.ctx, args[0])
			if err != nil {
				return err
			}
			return printJSON(e.stdout, u)
		},
	}
}

func newUserRmCmd(e *env, g *globals) *cobra.Command {
	return newRmCmd(e, g, rmSpec{
		use: "rm <username>", arg: "username", kind: "user",
		short:    "Delete a user (asks first unless -f); the topics they own fall to admins",
		question: "delete user %q? [y/N] ",
		remove:   func(cl *httpclient.Client, name string) error { return cl.DeleteUser(e.ctx, name) },
	})
}

func newUserPasswdCmd(e *env, g *globals) *cobra.Command {
	next := &secretFlag{name: "new-password", what: "the new password"}
	current := &secretFlag{name: "current-password", what: "the current password"}
	c := &cobra.Command{
		Use:   "passwd <username>",
		Short: "Change a user's password (an admin's, or your own with the current password)",
		Long: "Change a user's password; the grants are untouched. An admin may change any password\n" +
			"but root's, which only root may change. A user who is not an admin may change only\n" +
			"their own, and must give the current password too. At most one password can come\n" +
			"from standard input per call.",
		Args: exactArgs("username"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := next.check(cmd, true); err != nil {
				return err
			}
			if err := current.check(cmd, false); err != nil {
				return err
			}
			if err := oneStdinPassword(g, next, current); err != nil {
				return err
			}
			var change httpclient.PasswordChange
			var err error
			if change.New, err = next.read(e); err != nil {
				return err
			}
			if current.given(cmd) {
				if change.Current, err = current.read(e); err != nil {
					return err
				}
			}
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if err := cl.ChangePassword(e.ctx, args[0], change); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "password of user %q changed\n", args[0])
			return nil
		},
	}
	next.register(c)
	current.register(c)
	return c
}

package main

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
)

// newRemoteCmd is `narad remote` (api.md §8.2): the remote clusters that
// remote children ship to (api.md §2.18).
func newRemoteCmd(e *env, g *globals) *cobra.Command {
	c := groupCmd("remote", "Register, change, test and delete the remote clusters remote children ship to (admin)", "remotes")
	c.AddCommand(newRemoteAddCmd(e, g), newRemoteSetCmd(e, g), newRemoteRmCmd(e, g), newRemoteLsCmd(e, g), newRemoteTestCmd(e, g), newRemoteReencryptCmd(e, g))
	return c
}

// remoteFlags are the flags remote add and remote set share.
type remoteFlags struct {
	url, username, caFile string
	password              *secretFlag // standard input only: never inline
	maxInFlight           int
	requestTimeout        time.Duration
	idleConnTimeout       time.Duration
	connMaxAge            time.Duration
	checkInterval         time.Duration
	compression           string
	asJSON                bool
}

func (rf *remoteFlags) register(c *cobra.Command) {
	rf.password = &secretFlag{name: "remote-password", what: "the remote user's password"}
	f := c.Flags()
	f.StringVar(&rf.url, "url", "", "the remote cluster's address, https://host[:port][/path]")
	f.StringVar(&rf.username, "username", "", "the replicator user on the remote (must not be an admin there)")
	f.StringVar(&rf.caFile, "ca-file", "", "PEM file of the CAs that verify the remote (default: the system roots)")
	f.BoolVar(&rf.password.stdin, "remote-password-stdin", false, "read the remote user's password from the first line of standard input (the only way to give it)")
	f.IntVar(&rf.maxInFlight, "max-in-flight", 16, "requests in flight to the remote per node, 1 to 256")
	f.DurationVar(&rf.requestTimeout, "request-timeout", 30*time.Second, "timeout of one request to the remote, 5s to 120s")
	f.DurationVar(&rf.idleConnTimeout, "idle-conn-timeout", 30*time.Second, "how long an idle connection is kept, 1s to 300s")
	f.DurationVar(&rf.connMaxAge, "conn-max-age", 5*time.Minute, "age at which a connection is replaced, 10s to 1h")
	f.DurationVar(&rf.checkInterval, "check-interval", time.Minute, "how often each node re-checks each link's target, 10s to 1h")
	f.StringVar(&rf.compression, "compression", "none", "compress requests to the remote: none or zstd")
	f.BoolVar(&rf.asJSON, "json", false, "print the remote object as JSON")
}

// durationLimit is a duration flag sent in milliseconds, with its range
// (api.md §2.18).
type durationLimit struct {
	flag     string
	value    time.Duration
	min, max time.Duration
	field    **int64
}

// limits returns the limits the user set (nil when none), each checked
// against its range: a limit left out keeps the server's value.
func (rf *remoteFlags) limits(c *cobra.Command) (*httpclient.RemoteLimitsChange, error) {
	var l httpclient.RemoteLimitsChange
	f := c.Flags()
	if f.Changed("max-in-flight") {
		if rf.maxInFlight < 1 || rf.maxInFlight > 256 {
			return nil, usagef("--max-in-flight must be 1 to 256 (got %d)", rf.maxInFlight)
		}
		l.MaxInFlight = &rf.maxInFlight
	}
	for _, d := range []durationLimit{
		{"request-timeout", rf.requestTimeout, 5 * time.Second, 120 * time.Second, &l.RequestTimeoutMs},
		{"idle-conn-timeout", rf.idleConnTimeout, time.Second, 300 * time.Second, &l.IdleConnTimeoutMs},
		{"conn-max-age", rf.connMaxAge, 10 * time.Second, time.Hour, &l.ConnMaxAgeMs},
		{"check-interval", rf.checkInterval, 10 * time.Second, time.Hour, &l.CheckIntervalMs},
	} {
		if !f.Changed(d.flag) {
			continue
		}
		if d.value < d.min || d.value > d.max {
			return nil, usagef("--%s must be %s to %s (got %s)", d.flag, d.min, d.max, d.value)
		}
		ms := d.value.Milliseconds()
		*d.field = &ms
	}
	if f.Changed("compression") {
		if rf.compression != "none" && rf.compression != "zstd" {
			return nil, usagef("--compression must be none or zstd (got %q)", rf.compression)
		}
		l.Compression = &rf.compression
	}
	if l.Empty() {
		return nil, nil
	}
	return &l, nil
}

// readCA returns the PEM bundle of --ca-file.
func (rf *remoteFlags) readCA() (string, error) {
	b, err := os.ReadFile(rf.caFile)
	if err != nil {
		return "", fmt.Errorf("--ca-file: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", fmt.Errorf("--ca-file: %s is empty", rf.caFile)
	}
	return string(b), nil
}

// passwordClient is g.client for a request that carries a remote's
// password: it refuses a plain http:// server beyond this machine, where
// the password would cross the network in the clear (api.md §8.2).
func (g *globals) passwordClient(e *env) (*httpclient.Client, error) {
	t, err := g.resolve(e)
	if err != nil {
		return nil, err
	}
	for _, s := range t.servers {
		if host := plainRemoteHost(s); host != "" {
			return nil, fmt.Errorf("refusing to send the remote's password over plain http:// to %s: use the server's https:// address, or run the command on that node against localhost", host)
		}
	}
	return newClient(e, t)
}

// plainRemoteHost is the host of a plain http:// server address that is not
// this machine (localhost, 127.0.0.0/8, ::1), else "". A bare host:port
// means http://, as for the client.
func plainRemoteHost(server string) string {
	s := strings.TrimSpace(server)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || isLocalHost(u.Hostname()) {
		return ""
	}
	return u.Host
}

// printRemote prints a written remote as one line, or as JSON.
func printRemote(e *env, rf *remoteFlags, verb string, r *httpclient.Remote) error {
	if rf.asJSON {
		return printJSON(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "remote %q %s: %s as %s, credential version %d, fingerprint %s\n",
		r.Name, verb, cell(r.URL), cell(r.Username), r.CredentialVersion, cell(r.Password.Fingerprint))
	return nil
}

func newRemoteAddCmd(e *env, g *globals) *cobra.Command {
	rf := &remoteFlags{}
	c := &cobra.Command{
		Use:   "add <name> --url URL --username USER --remote-password-stdin",
		Short: "Register a remote cluster; the password comes from standard input",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case rf.url == "":
				return usagef("remote add needs --url")
			case rf.username == "":
				return usagef("remote add needs --username")
			case !rf.password.stdin:
				return usagef("remote add needs --remote-password-stdin: the remote's password is read from standard input only")
			}
			if err := oneStdinPassword(g, rf.password); err != nil {
				return err
			}
			req := httpclient.NewRemote{Name: args[0], URL: rf.url, Username: rf.username}
			var err error
			if req.Limits, err = rf.limits(cmd); err != nil {
				return err
			}
			if rf.caFile != "" {
				if req.CAPEM, err = rf.readCA(); err != nil {
					return err
				}
			}
			cl, err := g.passwordClient(e)
			if err != nil {
				return err
			}
			if req.Password, err = rf.password.read(e); err != nil {
				return err
			}
			r, err := cl.CreateRemote(e.ctx, req)
			if err != nil {
				return remoteError(err)
			}
			return printRemote(e, rf, "added", r)
		},
	}
	rf.register(c)
	return c
}

func newRemoteSetCmd(e *env, g *globals) *cobra.Command {
	rf := &remoteFlags{}
	var noCA bool
	c := &cobra.Command{
		Use:   "set <name>",
		Short: "Change a remote: address, user, CA, password or limits",
		Long: "Change a remote. The password is sealed together with the URL, username and CA,\n" +
			"so --url, --username, --ca-file and --no-ca need --remote-password-stdin too.\n" +
			"Limits left out keep their value.",
		Args: exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if rf.caFile != "" && noCA {
				return usagef("--ca-file and --no-ca are mutually exclusive")
			}
			for _, name := range []string{"url", "username", "ca-file", "no-ca"} {
				if f.Changed(name) && !rf.password.stdin {
					return usagef("--%s needs --remote-password-stdin: the password is sealed together with the URL, username and CA, so changing them needs it again", name)
				}
			}
			if err := oneStdinPassword(g, rf.password); err != nil {
				return err
			}
			change, err := rf.change(cmd, noCA)
			if err != nil {
				return err
			}
			cl, err := rf.client(e, g)
			if err != nil {
				return err
			}
			if rf.password.stdin {
				pw, err := rf.password.read(e)
				if err != nil {
					return err
				}
				change.Password = &pw
			}
			r, err := cl.UpdateRemote(e.ctx, args[0], change)
			if err != nil {
				return remoteError(err)
			}
			return printRemote(e, rf, "changed", r)
		},
	}
	rf.register(c)
	c.Flags().BoolVar(&noCA, "no-ca", false, "forget the CA bundle: verify the remote with the system roots")
	return c
}

// change is the PATCH body of remote set, without the password; nothing
// to change is a usage error.
func (rf *remoteFlags) change(c *cobra.Command, noCA bool) (httpclient.RemoteChange, error) {
	var ch httpclient.RemoteChange
	f := c.Flags()
	if f.Changed("url") {
		ch.URL = &rf.url
	}
	if f.Changed("username") {
		ch.Username = &rf.username
	}
	if noCA {
		ch.CAPEM = new(string)
	}
	if rf.caFile != "" {
		pem, err := rf.readCA()
		if err != nil {
			return ch, err
		}
		ch.CAPEM = &pem
	}
	var err error
	if ch.Limits, err = rf.limits(c); err != nil {
		return ch, err
	}
	if ch == (httpclient.RemoteChange{}) && !rf.password.stdin {
		return ch, usagef("nothing to change: give --remote-password-stdin, --url, --username, --ca-file, --no-ca or a limit")
	}
	return ch, nil
}

// client is passwordClient when the request carries a password, else g.client.
func (rf *remoteFlags) client(e *env, g *globals) (*httpclient.Client, error) {
	if rf.password.stdin {
		return g.passwordClient(e)
	}
	return g.client(e)
}

func newRemoteRmCmd(e *env, g *globals) *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:   "rm <name>",
		Short: "Delete a remote (refused while remote children use it, unless --force)",
		Args:  exactArgs("name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := g.client(e)
			if err != nil {
				return err
			}
			if err := cl.DeleteRemote(e.ctx, args[0], force); err != nil {
				return remoteError(err)
			}
			fmt.Fprintf(e.stdout, "remote %q deleted\n", args[0])
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "delete even while remote children use it: they hold in state remote_missing, losing nothing while the parent's retention lasts")
	return c
}

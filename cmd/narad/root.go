package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/bootstrap"
)

// defaultServer is where the client commands go without a flag, variable or context.
const defaultServer = "http://127.0.0.1:7942"

// Environment variables of api.md §8.1.
const (
	envAddr      = "NARAD_ADDR"
	envUser      = "NARAD_USER"
	envPass      = "NARAD_PASS"
	envConfigDir = "NARAD_CONFIG_DIR"
)

// env is everything a command touches outside itself, so tests can supply it.
type env struct {
	ctx           context.Context
	stdin         *bufio.Reader
	stdout        io.Writer
	stderr        io.Writer
	getenv        func(string) string
	userConfigDir func() (string, error)
	stderrTTY     bool
	httpClient    *http.Client  // nil = the client package's default
	retryBase     time.Duration // first backoff of retried acks and consumes
	pollInterval  time.Duration // pause between idle peek rounds
	progressEvery time.Duration // bench progress line period
}

func systemEnv(ctx context.Context, stdout, stderr io.Writer) *env {
	return &env{
		ctx:           ctx,
		stdin:         bufio.NewReader(os.Stdin),
		stdout:        stdout,
		stderr:        stderr,
		getenv:        os.Getenv,
		userConfigDir: os.UserConfigDir,
		stderrTTY:     isTerminal(stderr),
		retryBase:     100 * time.Millisecond,
		pollInterval:  500 * time.Millisecond,
		progressEvery: time.Second,
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// usageError is a misuse of the command line; it exits with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// globals are the persistent flags of every client command (api.md §8.1).
type globals struct {
	server        string
	user          string
	password      string
	passwordStdin bool
	ctxName       string
	started       bool // a command's RunE began: later errors are not usage errors
}

// execute runs the command line args and returns the process exit code.
func execute(e *env, args []string) int {
	root, g := newRoot(e)
	if args == nil {
		args = []string{}
	}
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	cmd, err := root.ExecuteContextC(e.ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(e.stderr, "narad: %v\n", err)
	if h := hintFor(cmd, err); h != "" {
		fmt.Fprintf(e.stderr, "hint: %s\n", h)
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ue usageError
	if errors.As(err, &ue) || !g.started {
		fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	return 1
}

func newRoot(e *env) (*cobra.Command, *globals) {
	g := &globals{}
	root := &cobra.Command{
		Use:           "narad",
		Short:         "Narad, a durable message broker: server and client in one binary",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.server, "server", "s", "", "server URL (else $"+envAddr+", the context, "+defaultServer+")")
	pf.StringVarP(&g.user, "user", "u", "", "username for HTTP Basic auth (else $"+envUser+", the context)")
	pf.StringVarP(&g.password, "password", "p", "", "password (else $"+envPass+", the context)")
	pf.BoolVar(&g.passwordStdin, "password-stdin", false, "read the password from the first line of standard input")
	pf.StringVar(&g.ctxName, "ctx", "", "use this saved context for this command only")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newVersionCmd(),
		newServeCmd(e),
		newCtxCmd(e, g),
		newTopicCmd(e, g),
		newPubCmd(e, g),
		newSubCmd(e, g),
		newAckCmd(e, g),
		newReplayCmd(e, g),
		newRedriveCmd(e, g),
		newServerCmd(e, g),
		newBenchCmd(e, g),
		newUserCmd(e, g),
		newClusterCmd(e, g),
		newRemoteCmd(e, g),
	)
	markStarted(root, g)
	addTopicCompletion(root, e, g)
	return root, g
}

// markStarted wraps every RunE so that errors after it begins exit 1, while
// errors before it (flags, arguments, unknown commands) exit 2.
func markStarted(c *cobra.Command, g *globals) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			g.started = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markStarted(sub, g)
	}
}

// groupCmd is a parent command: alone it prints its help, with an unknown
// subcommand it is a usage error.
func groupCmd(use, short string, aliases ...string) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Aliases: aliases,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
}

// exactArgs is cobra.ExactArgs with names in the message.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != len(names) {
			return usagef("%s needs %d argument(s): %s (got %d)", cmd.CommandPath(), len(names), strings.Join(names, " "), len(args))
		}
		return nil
	}
}

// target is where and as whom a command talks.
type target struct {
	servers  []string
	user     string
	password string
}

// resolve applies flag → environment → context → default per field (api.md
// §8.1); with --ctx the environment is not read and must be empty.
func (g *globals) resolve(e *env) (target, error) {
	if g.password != "" && g.passwordStdin {
		return target{}, usagef("--password and --password-stdin are mutually exclusive")
	}
	password := g.password
	if g.passwordStdin {
		var err error
		if password, err = readPasswordLine(e.stdin); err != nil {
			return target{}, err
		}
	}
	var fromEnv [3]string
	var saved contextEntry
	if g.ctxName != "" {
		for _, k := range []string{envAddr, envUser, envPass} {
			if e.getenv(k) != "" {
				return target{}, usagef("--ctx is refused while %s is set: unset %s, %s and %s to use a saved context", k, envAddr, envUser, envPass)
			}
		}
		cf, _, err := loadContexts(e)
		if err != nil {
			return target{}, err
		}
		entry, ok := cf.Contexts[g.ctxName]
		if !ok {
			return target{}, fmt.Errorf("context %q not found (see narad ctx ls)", g.ctxName)
		}
		saved = entry
	} else {
		fromEnv = [3]string{e.getenv(envAddr), e.getenv(envUser), e.getenv(envPass)}
		if cf, _, err := loadContexts(e); err == nil && cf.Current != "" {
			saved = cf.Contexts[cf.Current]
		} else if err != nil && !errors.Is(err, errNoConfigDir) {
			return target{}, err
		}
	}
	return target{
		servers:  []string{firstSet(g.server, fromEnv[0], saved.Server, defaultServer)},
		user:     firstSet(g.user, fromEnv[1], saved.User),
		password: firstSet(password, fromEnv[2], saved.Password),
	}, nil
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// readPasswordLine reads the first line of standard input, without its line end.
func readPasswordLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", fmt.Errorf("--password-stdin: no password on standard input")
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// client resolves the target and returns a client of it, warning first when
// credentials would cross the network in the clear.
func (g *globals) client(e *env) (*httpclient.Client, error) {
	t, err := g.resolve(e)
	if err != nil {
		return nil, err
	}
	return newClient(e, t)
}

func newClient(e *env, t target) (*httpclient.Client, error) {
	c, err := httpclient.New(httpclient.Options{
		Servers:    t.servers,
		User:       t.user,
		Password:   t.password,
		HTTPClient: e.httpClient,
		ClientName: "narad-cli/" + bootstrap.Build().Version,
	})
	if err != nil {
		return nil, usageError{err}
	}
	if t.user != "" {
		for _, s := range c.Servers() {
			if u, err := url.Parse(s); err == nil && u.Scheme == "http" && !isLocalHost(u.Hostname()) {
				fmt.Fprintf(e.stderr, "narad: warning: sending credentials over plain http:// to %s; use https:// beyond this machine\n", u.Host)
			}
		}
	}
	return c, nil
}

func isLocalHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// printJSON writes v indented, without HTML escaping.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// fieldTable prints aligned `key:  value` lines and leaves out the empty
// values: narad topic info and a redrive job.
type fieldTable struct{ tw *tabwriter.Writer }

func newFieldTable(w io.Writer) fieldTable { return fieldTable{newTable(w)} }

func (f fieldTable) row(k, v string) {
	if v != "" {
		fmt.Fprintf(f.tw, "%s:\t%s\n", k, v)
	}
}

func (f fieldTable) flush() error { return f.tw.Flush() }

// formatMs renders milliseconds compactly: "7d", "12h", "1h30m", "250ms".
func formatMs(ms int64) string {
	const day = 24 * time.Hour
	d := time.Duration(ms) * time.Millisecond
	if d >= day && d%day == 0 {
		return fmt.Sprintf("%dd", d/day)
	}
	s := d.String()
	for _, unit := range []string{"h", "m"} {
		s = strings.Replace(s, unit+"0m0s", unit, 1)
		s = strings.Replace(s, unit+"0s", unit, 1)
	}
	return s
}

// formatBytes renders a size with binary units: "512 B", "1.5 KiB", "3.0 GiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// transient reports whether a failed request is worth repeating: transport
// errors and the statuses api.md §3.4 says to retry.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	switch st := httpclient.StatusOf(err); {
	case st == 0:
		return !errors.Is(err, httpclient.ErrMalformedReply) && !errors.Is(err, httpclient.ErrEmptyMessage)
	case st == 421 || st == 429 || st >= 500:
		return true
	}
	return false
}

// maxAttempts bounds the tries of a retried read (consume, replay).
const maxAttempts = 5

// withRetries calls fn until it succeeds, fails for good, the context ends,
// or maxAttempts transient failures; waits double from e.retryBase up to 32
// times it, or follow the server's Retry-After when that is longer.
func withRetries(e *env, fn func() error) error {
	backoff := e.retryBase
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !transient(err) || attempt >= maxAttempts || e.ctx.Err() != nil {
			return err
		}
		if pause(e.ctx, max(backoff, retryAfter(err))) != nil {
			return err
		}
		backoff = min(2*backoff, 32*e.retryBase)
	}
}

func retryAfter(err error) time.Duration {
	var ae *httpclient.APIError
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ensure that `narad version` prints version, commit and Go version.
func TestVersionPrintsAllThree(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"version: ", "commit: ", "go:      " + runtime.Version()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// ensure that `narad version --json` is machine-readable with the three fields.
func TestVersionJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"version", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v: %s", err, out.String())
	}
	for _, k := range []string{"version", "commit", "go_version"} {
		if got[k] == "" {
			t.Errorf("field %q empty in %v", k, got)
		}
	}
}

// ensure that an unknown command fails with exit code 2 and says which.
func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"frobnicate"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `unknown command "frobnicate"`) {
		t.Fatalf("stderr: %s", errOut.String())
	}
}

// ensure that misuse exits 2 and failures exit 1, both with a "narad: " line on stderr.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"unknown_subcommand":   {args: []string{"topic", "frob"}, code: 2, msg: `unknown command "frob" for "narad topic"`},
		"missing_argument":     {args: []string{"topic", "info"}, code: 2, msg: "needs 1 argument(s): name"},
		"unknown_flag":         {args: []string{"topic", "ls", "--bogus"}, code: 2, msg: "unknown flag: --bogus"},
		"bad_server_url":       {args: []string{"topic", "ls", "-s", "ftp://localhost:7942"}, code: 2, msg: "bad server address"},
		"server_error":         {args: []string{"topic", "info", "nope", "-s", b.url()}, code: 1, msg: "narad: http 404: topic not found"},
		"unreachable_server":   {args: []string{"topic", "ls", "-s", "http://127.0.0.1:1"}, code: 1, msg: "hint: no Narad server answers there. Start one with `narad server start --dev`"},
		"host_port_no_scheme":  {args: []string{"topic", "info", "nope", "-s", strings.TrimPrefix(b.url(), "http://")}, code: 1, msg: "narad: http 404: topic not found"},
		"help_is_not_an_error": {args: []string{"topic", "--help"}, code: 0},
		"group_alone_is_help":  {args: []string{"topics"}, code: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{}, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d and %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the bench progress goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliOpts shape one CLI run in a test.
type cliOpts struct {
	ctx        context.Context // default t.Context()
	stdin      string
	vars       map[string]string // environment; NARAD_CONFIG_DIR defaults to a fresh temp dir
	httpClient *http.Client
	tty        bool          // stderr is a terminal
	progress   time.Duration // bench progress period (default: an hour, i.e. never)
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// runCLI runs the command line in a sealed environment: no real config
// directory, no process environment, fast retries.
func runCLI(t *testing.T, o cliOpts, args ...string) cliResult {
	t.Helper()
	vars := map[string]string{envConfigDir: t.TempDir()}
	for k, v := range o.vars {
		vars[k] = v
	}
	var out, errOut syncBuffer
	ctx := o.ctx
	if ctx == nil {
		ctx = t.Context()
	}
	e := &env{
		ctx:           ctx,
		stdin:         bufio.NewReader(strings.NewReader(o.stdin)),
		stdout:        &out,
		stderr:        &errOut,
		getenv:        func(k string) string { return vars[k] },
		userConfigDir: func() (string, error) { return "", errors.New("no config dir in tests") },
		httpClient:    o.httpClient,
		stderrTTY:     o.tty,
		retryBase:     time.Millisecond,
		pollInterval:  time.Millisecond,
		progressEvery: cmp.Or(o.progress, time.Hour),
	}
	code := execute(e, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
}

// ensure that a node that cannot start gets no client hint (its own
// start-up error says what to do), and that serve --help points to the
// configuration reference.
func TestServeHelpAndNoClientHint(t *testing.T) {
	t.Parallel()
	r := runCLI(t, cliOpts{}, "serve", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "docs/configuration.md") {
		t.Fatalf("serve --help: exit %d\n%s", r.code, r.stdout)
	}
	if h := hintFor(newServeCmd(&env{}), syscall.ECONNREFUSED); h != "" {
		t.Fatalf("serve got a client hint: %s", h)
	}
}

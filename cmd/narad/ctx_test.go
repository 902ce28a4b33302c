package main

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ensure that ctx add/select/ls/rm keep contexts.json in the documented shape, 0600 in a 0700 directory.
func TestContextLifecycle(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cfg")
	vars := map[string]string{envConfigDir: dir}
	steps := []struct {
		args   []string
		stdin  string
		code   int
		stdout string
	}{
		{args: []string{"ctx", "add", "dev", "--server", "http://127.0.0.1:7942"}, stdout: `context "dev" saved and selected`},
		{args: []string{"ctx", "add", "prod", "-s", "https://narad.example", "-u", "admin", "--password-stdin"}, stdin: "s3cret\n", stdout: `context "prod" saved`},
		{args: []string{"ctx", "select", "prod"}, stdout: "current context: prod"},
		{args: []string{"ctx", "select", "nope"}, code: 1},
		{args: []string{"ctx", "add", "bad name", "-s", "http://x"}, code: 2},
		{args: []string{"ctx", "add", "noserver"}, code: 2},
		{args: []string{"ctx", "ls"}, stdout: "*        prod  https://narad.example  admin"},
		{args: []string{"ctx", "rm", "dev"}, stdout: `context "dev" removed`},
		{args: []string{"ctx", "rm", "dev"}, code: 1},
	}
	for _, s := range steps {
		r := runCLI(t, cliOpts{vars: vars, stdin: s.stdin}, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout, s.stdout) {
			t.Fatalf("%v: exit %d stdout %q stderr %q; want %d and %q", s.args, r.code, r.stdout, r.stderr, s.code, s.stdout)
		}
	}
	path := filepath.Join(dir, "contexts.json")
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v err %v", st.Mode(), err)
	}
	if dst, _ := os.Stat(dir); dst.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", dst.Mode())
	}
	var cf map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &cf); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"current": "prod", "contexts": map[string]any{"prod": map[string]any{"server": "https://narad.example", "user": "admin", "password": "s3cret"}}}
	if mustJSON(cf) != mustJSON(want) {
		t.Fatalf("contexts.json = %s, want %s", b, mustJSON(want))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ensure that the server resolves flag, then environment, then the context, then the default.
func TestServerResolutionOrder(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		flag, env, ctx bool // which sources are given
		named          bool // --ctx other instead of the current context
		want           string
	}{
		"flag_beats_env_and_context": {flag: true, env: true, ctx: true, want: "flag"},
		"env_beats_context":          {env: true, ctx: true, want: "env"},
		"context_when_nothing_else":  {ctx: true, want: "ctx"},
		"named_context_with_ctx":     {ctx: true, named: true, want: "other"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			brokers := map[string]*fakeBroker{"flag": newFakeBroker(t), "env": newFakeBroker(t), "ctx": newFakeBroker(t), "other": newFakeBroker(t)}
			vars := map[string]string{envConfigDir: t.TempDir()}
			for _, c := range [][]string{{"ctx", "add", "main", "-s", brokers["ctx"].url()}, {"ctx", "add", "other", "-s", brokers["other"].url()}} {
				if r := runCLI(t, cliOpts{vars: vars}, c...); r.code != 0 {
					t.Fatal(r.stderr)
				}
			}
			args := []string{"topic", "ls"}
			if tc.flag {
				args = append(args, "-s", brokers["flag"].url())
			}
			if tc.env {
				vars[envAddr] = brokers["env"].url()
			}
			if tc.named {
				args = append(args, "--ctx", "other")
			}
			if r := runCLI(t, cliOpts{vars: vars}, args...); r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for n, b := range brokers {
				if got := len(b.lines("GET /v1/topics")); (n == tc.want) != (got == 1) {
					t.Fatalf("server %q got %d requests; want only %q", n, got, tc.want)
				}
			}
		})
	}
}

// ensure that with no flag, variable or context the default server is used.
func TestDefaultServer(t *testing.T) {
	t.Parallel()
	var seen string
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.URL.String()
		return nil, errors.New("stop here")
	})}
	r := runCLI(t, cliOpts{httpClient: hc}, "topic", "ls")
	if r.code != 1 || seen != defaultServer+"/v1/topics" {
		t.Fatalf("exit %d, request to %q", r.code, seen)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// ensure that credentials come from flags, stdin, env or the context, and go as Basic auth.
func TestCredentialResolution(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.user, b.pass = "alice", "pw"
	cases := map[string]struct {
		args  []string
		vars  map[string]string
		stdin string
		code  int
	}{
		"flags":               {args: []string{"-u", "alice", "-p", "pw"}},
		"password_from_stdin": {args: []string{"-u", "alice", "--password-stdin"}, stdin: "pw\r\n"},
		"environment":         {vars: map[string]string{envUser: "alice", envPass: "pw"}},
		"flag_over_env":       {args: []string{"-p", "pw"}, vars: map[string]string{envUser: "alice", envPass: "wrong"}},
		"wrong_password":      {args: []string{"-u", "alice", "-p", "nope"}, code: 1},
		"both_password_forms": {args: []string{"-u", "alice", "-p", "pw", "--password-stdin"}, stdin: "pw\n", code: 2},
		"empty_stdin":         {args: []string{"-u", "alice", "--password-stdin"}, code: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{envAddr: b.url()}
			for k, v := range tc.vars {
				vars[k] = v
			}
			r := runCLI(t, cliOpts{vars: vars, stdin: tc.stdin}, append([]string{"topic", "ls"}, tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d: %s", r.code, tc.code, r.stderr)
			}
			if strings.Contains(r.stderr, "warning") {
				t.Fatalf("warned about a loopback server: %s", r.stderr)
			}
		})
	}
}

// ensure that --ctx is refused while any of the three variables is set, and an unknown context fails.
func TestCtxFlagRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		vars map[string]string
		code int
		msg  string
	}{
		"addr_set":        {vars: map[string]string{envAddr: "http://x:1"}, code: 2, msg: "--ctx is refused while NARAD_ADDR is set"},
		"pass_set":        {vars: map[string]string{envPass: "p"}, code: 2, msg: "--ctx is refused while NARAD_PASS is set"},
		"unknown_context": {code: 1, msg: `context "ghost" not found`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{vars: tc.vars}, "topic", "ls", "--ctx", "ghost")
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
		})
	}
}

// ensure that credentials bound for plain http:// on a non-local host draw a warning, and local ones do not.
func TestPlainHTTPCredentialWarning(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	addr := strings.TrimPrefix(b.url(), "http://")
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr) // every host name leads to the fake
	}}}
	cases := map[string]struct {
		server string
		user   string
		warn   bool
	}{
		"remote_http_with_user":   {server: "http://broker.example:7942", user: "alice", warn: true},
		"remote_http_no_user":     {server: "http://broker.example:7942"},
		"localhost_with_user":     {server: "http://localhost:7942", user: "alice"},
		"loopback_ipv6_with_user": {server: "http://[::1]:7942", user: "alice"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{httpClient: hc}, "topic", "ls", "-s", tc.server, "-u", tc.user, "-p", "pw")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := strings.Contains(r.stderr, "warning: sending credentials over plain http://"); got != tc.warn {
				t.Fatalf("warned %v, want %v: %q", got, tc.warn, r.stderr)
			}
		})
	}
}

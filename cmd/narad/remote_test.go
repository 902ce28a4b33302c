package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// cannedNode answers each "METHOD escaped-path" from a script (404
// otherwise) and records every request with its query and body.
type cannedNode struct {
	mu      sync.Mutex
	sent    []string // "METHOD /path?query body"
	answers map[string]scripted
	url     string
}

func newCannedNode(t *testing.T, answers map[string]scripted) *cannedNode {
	t.Helper()
	n := &cannedNode{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.sent = append(n.sent, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		a, ok := n.answers[r.Method+" "+r.URL.EscapedPath()]
		n.mu.Unlock()
		if !ok {
			a = scripted{http.StatusNotFound, `{"error":"not found"}`}
		}
		if r.Header.Get("X-Narad-Client") == "" {
			a = scripted{http.StatusUnsupportedMediaType, `{"error":"no X-Narad-Client"}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	n.url = srv.URL
	return n
}

func (n *cannedNode) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.sent)
}

// wireCase is one command line against a canned node.
type wireCase struct {
	args   []string
	stdin  string
	code   int
	stdout string   // expected in stdout
	stderr string   // expected in stderr
	sent   []string // every request, "METHOD /path?query body"; nil = none
}

// runWireCases runs each case against its own canned node and checks the
// exit code, the output, the exact requests, and that no secret was printed.
func runWireCases(t *testing.T, prefix []string, answers map[string]scripted, cases map[string]wireCase, secrets ...string) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := newCannedNode(t, answers)
			args := append(append(slices.Clone(prefix), tc.args...), "-s", n.url)
			r := runCLI(t, cliOpts{stdin: tc.stdin}, args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s\nwant %d, %q, %q", r.code, r.stdout, r.stderr, tc.code, tc.stdout, tc.stderr)
			}
			if got := n.requests(); !slices.Equal(got, tc.sent) {
				t.Fatalf("sent %q\nwant %q", got, tc.sent)
			}
			for _, s := range secrets {
				if strings.Contains(r.stdout+r.stderr, s) {
					t.Fatalf("a secret was printed:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
				}
			}
		})
	}
}

// remoteAnswer is a remote object as api.md §2.18 shows it.
const remoteAnswer = `{"name":"eu","id":"r1","url":"https://eu.example.com","username":"replicator",` +
	`"password":{"fingerprint":"fp-1a2b","set_at":"2026-11-02T10:00:00Z","set_by":"admin","key_version":"k1"},"credential_version":3,` +
	`"limits":{"max_in_flight":16,"request_timeout_ms":30000,"idle_conn_timeout_ms":30000,"conn_max_age_ms":300000,"check_interval_ms":60000,"compression":"none"},` +
	`"revision":7,"created_at":"2026-11-01T09:00:00Z","created_by":"admin"}`

const remotePass = "a-remote-password-of-24+bytes"

// ensure that remote add sends the password from standard input and only
// the limits given, prints one line without the password, and refuses
// misuse before any request.
func TestRemoteAdd(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answers := map[string]scripted{"POST /v1/remotes": {http.StatusCreated, remoteAnswer}}
	base := []string{"eu", "--url", "https://eu.example.com", "--username", "replicator", "--remote-password-stdin"}
	with := func(more ...string) []string { return append(slices.Clone(base), more...) }
	body := `{"name":"eu","url":"https://eu.example.com","username":"replicator","password":"` + remotePass + `"`
	cases := map[string]wireCase{
		"minimal": {args: base, stdin: remotePass + "\r\nnext line\n",
			stdout: `remote "eu" added: https://eu.example.com as replicator, credential version 3, fingerprint fp-1a2b` + "\n",
			sent:   []string{"POST /v1/remotes " + body + "}"}},
		"limits_only_when_set": {args: with("--max-in-flight", "16", "--request-timeout", "10s", "--compression", "zstd"), stdin: remotePass,
			sent: []string{"POST /v1/remotes " + body + `,"limits":{"max_in_flight":16,"request_timeout_ms":10000,"compression":"zstd"}}`}},
		"every_limit": {args: with("--idle-conn-timeout", "1m", "--conn-max-age", "1h", "--check-interval", "10s"), stdin: remotePass,
			sent: []string{"POST /v1/remotes " + body + `,"limits":{"idle_conn_timeout_ms":60000,"conn_max_age_ms":3600000,"check_interval_ms":10000}}`}},
		"ca_file": {args: with("--ca-file", caFile), stdin: remotePass,
			sent: []string{"POST /v1/remotes " + body + `,"ca_pem":"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"}`}},
		"json":                {args: with("--json"), stdin: remotePass, stdout: "{\n  \"name\": \"eu\",\n  \"id\": \"r1\",", sent: []string{"POST /v1/remotes " + body + "}"}},
		"no_password":         {args: base[:5], code: 2, stderr: "remote add needs --remote-password-stdin"},
		"no_url":              {args: []string{"eu", "--username", "u", "--remote-password-stdin"}, code: 2, stderr: "remote add needs --url"},
		"no_username":         {args: []string{"eu", "--url", "https://x", "--remote-password-stdin"}, code: 2, stderr: "remote add needs --username"},
		"inline_password":     {args: with("--remote-password", remotePass), code: 2, stderr: "unknown flag: --remote-password"},
		"two_stdin_passwords": {args: with("-u", "admin", "--password-stdin"), stdin: "root\n" + remotePass, code: 2, stderr: "--password-stdin and --remote-password-stdin cannot be used together"},
		"max_in_flight_zero":  {args: with("--max-in-flight", "0"), code: 2, stderr: "--max-in-flight must be 1 to 256 (got 0)"},
		"max_in_flight_257":   {args: with("--max-in-flight", "257"), code: 2, stderr: "--max-in-flight must be 1 to 256"},
		"timeout_too_short":   {args: with("--request-timeout", "2s"), code: 2, stderr: "--request-timeout must be 5s to 2m0s (got 2s)"},
		"check_too_long":      {args: with("--check-interval", "2h"), code: 2, stderr: "--check-interval must be 10s to 1h0m0s"},
		"bad_compression":     {args: with("--compression", "gzip"), code: 2, stderr: `--compression must be none or zstd (got "gzip")`},
		"missing_ca_file":     {args: with("--ca-file", filepath.Join(t.TempDir(), "none.pem")), stdin: remotePass, code: 1, stderr: "--ca-file: open"},
		"empty_stdin":         {args: base, code: 1, stderr: "--remote-password-stdin: no password on standard input"},
	}
	runWireCases(t, []string{"remote", "add"}, answers, cases, remotePass)
	exists := map[string]scripted{"POST /v1/remotes": {http.StatusConflict, `{"error":"remote \"eu\" already exists"}`}}
	runWireCases(t, []string{"remote", "add"}, exists, map[string]wireCase{
		"server_refuses": {args: base, stdin: remotePass, code: 1, stderr: "narad: http 409: remote \"eu\" already exists\n", sent: []string{"POST /v1/remotes " + body + "}"}},
	}, remotePass)
}

// ensure that a command carrying a remote's password refuses a plain
// http:// server beyond this machine before reading or sending anything,
// while loopback servers, https:// and changes without a password pass.
func TestRemotePasswordNeedsALocalOrEncryptedServer(t *testing.T) {
	t.Parallel()
	n := newCannedNode(t, map[string]scripted{"PATCH /v1/remotes/eu": {http.StatusOK, remoteAnswer}})
	// Every host name reaches the canned node, as if it were far away.
	far := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, strings.TrimPrefix(n.url, "http://"))
	}}}
	for _, cmd := range [][]string{
		{"remote", "add", "eu", "--url", "https://eu.example.com", "--username", "u", "--remote-password-stdin"},
		{"remote", "set", "eu", "--remote-password-stdin"},
	} {
		for _, server := range []string{"http://example.com:7942", "example.com:7942", "http://10.1.2.3:7942"} {
			r := runCLI(t, cliOpts{stdin: remotePass + "\n", httpClient: far}, append(slices.Clone(cmd), "-s", server)...)
			if r.code != 1 || !strings.Contains(r.stderr, "refusing to send the remote's password over plain http:// to") || strings.Contains(r.stderr, remotePass) {
				t.Fatalf("%s to %s: exit %d stderr %q", strings.Join(cmd, " "), server, r.code, r.stderr)
			}
		}
	}
	if sent := n.requests(); len(sent) != 0 {
		t.Fatalf("a password went over plain http: %q", sent)
	}
	r := runCLI(t, cliOpts{httpClient: far}, "remote", "set", "eu", "--max-in-flight", "8", "-s", "http://example.com:7942")
	if r.code != 0 || !slices.Equal(n.requests(), []string{`PATCH /v1/remotes/eu {"limits":{"max_in_flight":8}}`}) {
		t.Fatalf("a change without a password: exit %d stderr %q sent %q", r.code, r.stderr, n.requests())
	}
	cases := map[string]string{
		"http://example.com": "example.com", "example.com:7942": "example.com:7942", "http://10.0.0.1:80": "10.0.0.1:80",
		"http://127.0.0.1:7942": "", "http://127.9.8.7": "", "http://[::1]:7942": "", "http://localhost:7942": "", "localhost:7942": "",
		"http://node.localhost": "", "https://example.com": "", "HTTPS://example.com": "",
	}
	for server, want := range cases {
		if got := plainRemoteHost(server); got != want {
			t.Errorf("plainRemoteHost(%q) = %q, want %q", server, got, want)
		}
	}
}

// ensure that remote set sends only what changed, needs the password for
// the sealed fields, and refuses an empty change, all before any request.
func TestRemoteSet(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, []byte("PEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answers := map[string]scripted{"PATCH /v1/remotes/eu": {http.StatusOK, remoteAnswer}}
	pw := `"password":"` + remotePass + `"`
	cases := map[string]wireCase{
		"password_only": {args: []string{"eu", "--remote-password-stdin"}, stdin: remotePass + "\n",
			stdout: `remote "eu" changed: https://eu.example.com as replicator, credential version 3, fingerprint fp-1a2b`,
			sent:   []string{"PATCH /v1/remotes/eu {" + pw + "}"}},
		"url_user_with_password": {args: []string{"eu", "--url", "https://eu2.example.com", "--username", "rep2", "--remote-password-stdin"}, stdin: remotePass,
			sent: []string{`PATCH /v1/remotes/eu {"url":"https://eu2.example.com","username":"rep2",` + pw + "}"}},
		"no_ca": {args: []string{"eu", "--no-ca", "--remote-password-stdin"}, stdin: remotePass,
			sent: []string{"PATCH /v1/remotes/eu {" + pw + `,"ca_pem":""}`}},
		"ca_file": {args: []string{"eu", "--ca-file", caFile, "--remote-password-stdin"}, stdin: remotePass,
			sent: []string{"PATCH /v1/remotes/eu {" + pw + `,"ca_pem":"PEM\n"}`}},
		"limits_without_password": {args: []string{"eu", "--check-interval", "2m", "--compression", "none"},
			sent: []string{`PATCH /v1/remotes/eu {"limits":{"check_interval_ms":120000,"compression":"none"}}`}},
		"url_without_password":      {args: []string{"eu", "--url", "https://eu2.example.com"}, code: 2, stderr: "--url needs --remote-password-stdin"},
		"username_without_password": {args: []string{"eu", "--username", "x"}, code: 2, stderr: "--username needs --remote-password-stdin"},
		"ca_without_password":       {args: []string{"eu", "--ca-file", caFile}, code: 2, stderr: "--ca-file needs --remote-password-stdin"},
		"no_ca_without_password":    {args: []string{"eu", "--no-ca"}, code: 2, stderr: "--no-ca needs --remote-password-stdin"},
		"ca_and_no_ca":              {args: []string{"eu", "--ca-file", caFile, "--no-ca", "--remote-password-stdin"}, code: 2, stderr: "--ca-file and --no-ca are mutually exclusive"},
		"nothing_to_change":         {args: []string{"eu"}, code: 2, stderr: "nothing to change"},
		"bad_limit":                 {args: []string{"eu", "--conn-max-age", "5s"}, code: 2, stderr: "--conn-max-age must be 10s to 1h0m0s"},
		"two_stdin_passwords":       {args: []string{"eu", "--remote-password-stdin", "-u", "admin", "--password-stdin"}, stdin: "a\nb\n", code: 2, stderr: "cannot be used together"},
		"unknown_remote":            {args: []string{"us", "--max-in-flight", "4"}, code: 1, stderr: "narad: http 404: not found", sent: []string{`PATCH /v1/remotes/us {"limits":{"max_in_flight":4}}`}},
	}
	runWireCases(t, []string{"remote", "set"}, answers, cases, remotePass)
}

// ensure that remote rm sends force only with --force and names the links
// that hold a refused delete.
func TestRemoteRm(t *testing.T) {
	t.Parallel()
	answers := map[string]scripted{
		"DELETE /v1/remotes/eu":   {http.StatusNoContent, ""},
		"DELETE /v1/remotes/used": {http.StatusConflict, `{"error":"remote is used by 2 remote children","links":["orders/orders-eu","pay/pay-eu"]}`},
	}
	cases := map[string]wireCase{
		"plain": {args: []string{"eu"}, stdout: "remote \"eu\" deleted\n", sent: []string{"DELETE /v1/remotes/eu"}},
		"force": {args: []string{"eu", "--force"}, stdout: "remote \"eu\" deleted\n", sent: []string{"DELETE /v1/remotes/eu?force=true"}},
		"in_use": {args: []string{"used"}, code: 1, stderr: "narad: http 409: remote is used by 2 remote children\n  used by orders/orders-eu\n  used by pay/pay-eu\n",
			sent: []string{"DELETE /v1/remotes/used"}},
		"no_name":        {code: 2, stderr: "needs 1 argument(s): name"},
		"no_f_shorthand": {args: []string{"eu", "-f"}, code: 2, stderr: "unknown shorthand flag: 'f'"},
		"unknown_remote": {args: []string{"x"}, code: 1, stderr: "narad: http 404: not found", sent: []string{"DELETE /v1/remotes/x"}},
	}
	runWireCases(t, []string{"remote", "rm"}, answers, cases)
}

// ensure that remote ls asks for the members' view unless --no-nodes and
// prints a table with each node's state, the key and the stragglers.
func TestRemoteLs(t *testing.T) {
	t.Parallel()
	withNodes := strings.Replace(remoteAnswer, `"created_by":"admin"`, `"created_by":"admin","links":["orders/orders-eu"],"nodes":[{"node":"n1","state":"ready","last_error":"none"},{"node":"n2","state":"stale","last_error":"auth_failed"}]`, 1)
	list := `{"allowlist":"none","key":{"key_version":"k1","first_sealed_at":"2026-11-01T09:00:00Z","age_seconds":172800},"remotes":[` + withNodes + `],"lingering":["old"],"not_answering":["n3"]}`
	answers := map[string]scripted{"GET /v1/remotes": {http.StatusOK, list}}
	cases := map[string]wireCase{
		"table": {stdout: "NAME  URL                     USERNAME    CREDENTIAL  FINGERPRINT  LINKS  NODES\n" +
			"eu    https://eu.example.com  replicator  3           fp-1a2b      1      n1=ready n2=stale(auth_failed)\n" +
			"sealing key k1, first sealed 2026-11-01T09:00:00Z, 2d old\n" +
			"deleted but still held by a member: old\nnot answering: n3\n",
			sent: []string{"GET /v1/remotes"}},
		"no_nodes": {args: []string{"--no-nodes"}, stdout: "NAME  URL                     USERNAME    CREDENTIAL  FINGERPRINT  LINKS\n", sent: []string{"GET /v1/remotes?nodes=false"}},
		"json":     {args: []string{"--json"}, stdout: "{\n  \"allowlist\": \"none\",\n  \"key\": {", sent: []string{"GET /v1/remotes"}},
		"extra":    {args: []string{"eu"}, code: 2},
	}
	runWireCases(t, []string{"remote", "ls"}, answers, cases)
}

// ensure that remote test sends the topic and source, prints each node's
// report, and exits 1 unless the verdict is pass.
func TestRemoteTest(t *testing.T) {
	t.Parallel()
	pass := `{"remote":"eu","result":"pass","checks":[{"node":"n1","result":"pass","credential_version":3,"target_serves_ids":true,"rtt_ms":12,"lane_capacity_per_s":800,"warnings":[]}]}`
	fail := `{"remote":"bad","result":"fail","class":"target_missing","checks":[{"node":"n1","result":"fail","class":"target_missing","rtt_ms":9,"warnings":["cert expires soon"]}]}`
	answers := map[string]scripted{
		"POST /v1/remotes/eu/test":  {http.StatusOK, pass},
		"POST /v1/remotes/bad/test": {http.StatusOK, fail},
	}
	cases := map[string]wireCase{
		"pass": {args: []string{"eu", "--topic", "orders"}, stdout: "remote \"eu\", topic \"orders\": pass\nNODE  RESULT  CLASS  RTT   WARNINGS\nn1    pass    -      12ms  -\n",
			sent: []string{`POST /v1/remotes/eu/test {"topic":"orders"}`}},
		"source": {args: []string{"eu", "--topic", "orders", "--source", "local-orders"}, sent: []string{`POST /v1/remotes/eu/test {"topic":"orders","source":"local-orders"}`}},
		"fail": {args: []string{"bad", "--topic", "orders"}, code: 1, stdout: "n1    fail    target_missing  9ms  cert expires soon",
			stderr: "narad: remote \"bad\" failed the test: target_missing\n", sent: []string{`POST /v1/remotes/bad/test {"topic":"orders"}`}},
		"fail_json": {args: []string{"bad", "--topic", "orders", "--json"}, code: 1, stdout: "\"result\": \"fail\"", sent: []string{`POST /v1/remotes/bad/test {"topic":"orders"}`}},
		"no_topic":  {args: []string{"eu"}, code: 2, stderr: "remote test needs --topic"},
	}
	runWireCases(t, []string{"remote", "test"}, answers, cases)
}

// ensure that remote reencrypt sends {} and exits 1 when a remote failed.
func TestRemoteReencrypt(t *testing.T) {
	t.Parallel()
	clean := map[string]scripted{"POST /v1/cluster/reencrypt-remotes": {http.StatusOK, `{"key_version":"k2","reencrypted":["eu"],"already_current":["us"],"failed":[]}`}}
	runWireCases(t, []string{"remote", "reencrypt"}, clean, map[string]wireCase{
		"all_done": {stdout: "key version: k2\nre-encrypted: eu\nalready current: us\n", sent: []string{"POST /v1/cluster/reencrypt-remotes {}"}},
	})
	failed := map[string]scripted{"POST /v1/cluster/reencrypt-remotes": {http.StatusOK, `{"key_version":"k2","reencrypted":[],"already_current":[],"failed":[{"name":"eu","reason":"key_unknown"}]}`}}
	runWireCases(t, []string{"remote", "reencrypt"}, failed, map[string]wireCase{
		"one_failed": {code: 1, stdout: "re-encrypted: -\nalready current: -\nfailed: eu (key_unknown)\n", stderr: "narad: 1 remote(s) could not be re-encrypted",
			sent: []string{"POST /v1/cluster/reencrypt-remotes {}"}},
		"one_failed_json": {args: []string{"--json"}, code: 1, stdout: `"reason": "key_unknown"`, sent: []string{"POST /v1/cluster/reencrypt-remotes {}"}},
	})
	precondition := map[string]scripted{"POST /v1/cluster/reencrypt-remotes": {http.StatusPreconditionFailed, `{"error":"the leader's cluster secret is missing"}`}}
	runWireCases(t, []string{"remote", "reencrypt"}, precondition, map[string]wireCase{
		"refused": {code: 1, stderr: "narad: http 412: the leader's cluster secret is missing\n", sent: []string{"POST /v1/cluster/reencrypt-remotes {}"}},
	})
}

// ensure that remote ls --json prints what the server said, decodable.
func TestRemoteLsJSONDecodes(t *testing.T) {
	t.Parallel()
	n := newCannedNode(t, map[string]scripted{"GET /v1/remotes": {http.StatusOK, `{"allowlist":"set","remotes":[]}`}})
	r := runCLI(t, cliOpts{}, "remote", "ls", "--json", "-s", n.url)
	var got map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || got["allowlist"] != "set" {
		t.Fatalf("exit %d stdout %s stderr %s", r.code, r.stdout, r.stderr)
	}
}

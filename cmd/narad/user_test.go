package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// asRoot and asAlice are the credential flags of the fake admin broker's users.
var (
	asRoot  = []string{"-u", "admin", "-p", rootPass}
	asAlice = []string{"-u", "alice", "-p", alicePass}
)

// secretCase is one run of a user command against the fake admin broker.
type secretCase struct {
	args  []string
	creds []string // default asRoot
	vars  map[string]string
	stdin string
	code  int
	msg   string // expected in stderr
	line  string // the one request expected, "METHOD /path"
	body  string // its body
	out   string // expected in stdout
}

// runSecretCase runs the case and checks the exit code, the message, the one
// request (line, body, Basic credentials, X-Narad-Client) or none after a
// refusal, and that no password given in secrets reached stdout or stderr.
func runSecretCase(t *testing.T, cmd []string, tc secretCase, secrets ...string) cliResult {
	t.Helper()
	f := newFakeAdmin(t)
	creds := tc.creds
	if creds == nil {
		creds = asRoot
	}
	args := append(append(append(slices.Clone(cmd), "-s", f.url()), creds...), tc.args...)
	r := runCLI(t, cliOpts{stdin: tc.stdin, vars: tc.vars}, args...)
	if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) || !strings.Contains(r.stdout, tc.out) {
		t.Fatalf("exit %d stderr %q stdout %q, want %d %q %q", r.code, r.stderr, r.stdout, tc.code, tc.msg, tc.out)
	}
	for _, s := range append(secrets, rootPass, alicePass) {
		if strings.Contains(r.stdout+r.stderr, s) {
			t.Fatalf("a password was printed:\nstdout %s\nstderr %s", r.stdout, r.stderr)
		}
	}
	reqs := f.requests()
	if tc.line == "" {
		if len(reqs) != 0 {
			t.Fatalf("a refused command sent %v", reqs[0].line)
		}
		return r
	}
	if len(reqs) != 1 || reqs[0].line != tc.line || reqs[0].body != tc.body {
		t.Fatalf("requests %+v, want one %s %s", reqs, tc.line, tc.body)
	}
	user := "admin"
	if len(creds) > 1 && creds[0] == "-u" {
		user = creds[1]
	}
	if u := basicUser(reqs[0]); u != user || !strings.HasPrefix(reqs[0].header.Get("X-Narad-Client"), "narad-cli/") {
		t.Fatalf("request as %q with X-Narad-Client %q", u, reqs[0].header.Get("X-Narad-Client"))
	}
	return r
}

// basicUser is the username of the request's Basic credentials.
func basicUser(r seenRequest) string {
	u, _, _ := (&http.Request{Header: r.header}).BasicAuth()
	return u
}

// ensure that user add sends the password and parsed grants, prints the user, and refuses misuse before any request.
func TestUserAdd(t *testing.T) {
	t.Parallel()
	const pw = "Bob-Secret-1"
	ok := func(body string) secretCase {
		return secretCase{line: "POST /v1/users", body: body, out: `"username": "bob"`}
	}
	withGrants := ok(`{"username":"bob","password":"` + pw + `","grants":[{"action":"produce","patterns":["orders-*","audit"]},{"action":"admin"},{"action":"consume","patterns":["x"]}]}`)
	withGrants.args = []string{"bob", "--user-password", pw, "--grant", "produce:orders-*,audit", "--grant", "admin", "--grant", "consume: x "}
	fromStdin := ok(`{"username":"bob","password":"` + pw + `"}`)
	fromStdin.args, fromStdin.stdin = []string{"bob", "--user-password-stdin"}, pw+"\r\nsecond line\n"
	noNewline := fromStdin
	noNewline.stdin = pw
	envCreds := fromStdin
	envCreds.creds, envCreds.vars = []string{}, map[string]string{envUser: "admin", envPass: rootPass}
	globalStdin := secretCase{args: []string{"bob", "--user-password", pw}, creds: []string{"-u", "admin", "--password-stdin"}, stdin: rootPass + "\n", line: "POST /v1/users", body: `{"username":"bob","password":"` + pw + `"}`}
	cases := map[string]secretCase{
		"inline_password_and_grants": withGrants,
		"password_from_stdin":        fromStdin,
		"stdin_without_newline":      noNewline,
		"credentials_from_env":       envCreds,
		"own_password_from_stdin":    globalStdin,
		"no_password":                {args: []string{"bob"}, code: 2, msg: "needs --user-password-stdin or --user-password"},
		"both_password_forms":        {args: []string{"bob", "--user-password", pw, "--user-password-stdin"}, stdin: pw, code: 2, msg: "--user-password and --user-password-stdin are mutually exclusive"},
		"empty_inline_password":      {args: []string{"bob", "--user-password", ""}, code: 2, msg: "--user-password is empty"},
		"two_passwords_on_stdin":     {args: []string{"bob", "--user-password-stdin"}, creds: []string{"-u", "admin", "--password-stdin"}, stdin: rootPass + "\n" + pw + "\n", code: 2, msg: "--password-stdin and --user-password-stdin cannot be used together"},
		"grant_empty_action":         {args: []string{"bob", "--user-password", pw, "--grant", ":orders"}, code: 2, msg: `--grant ":orders": empty action`},
		"grant_without_patterns":     {args: []string{"bob", "--user-password", pw, "--grant", "produce"}, code: 2, msg: "produce needs at least one topic pattern"},
		"grant_empty_list":           {args: []string{"bob", "--user-password", pw, "--grant", "consume:"}, code: 2, msg: "consume needs at least one topic pattern"},
		"grant_empty_pattern":        {args: []string{"bob", "--user-password", pw, "--grant", "produce:a,,b"}, code: 2, msg: "empty pattern"},
		"admin_with_patterns":        {args: []string{"bob", "--user-password", pw, "--grant", "admin:x"}, code: 2, msg: "admin grants are global"},
		"no_username":                {args: []string{"--user-password", pw}, code: 2, msg: "needs 1 argument(s): username"},
		"empty_stdin":                {args: []string{"bob", "--user-password-stdin"}, code: 1, msg: "--user-password-stdin: no password on standard input"},
		"blank_stdin_line":           {args: []string{"bob", "--user-password-stdin"}, stdin: "\n", code: 1, msg: "first line of standard input is empty"},
		"exists":                     {args: []string{"alice", "--user-password", pw}, code: 1, msg: "narad: http 409: already exists", line: "POST /v1/users", body: `{"username":"alice","password":"` + pw + `"}`},
		"not_admin":                  {args: []string{"bob", "--user-password", pw}, creds: asAlice, code: 1, msg: "http 403: admin privileges required", line: "POST /v1/users", body: `{"username":"bob","password":"` + pw + `"}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runSecretCase(t, []string{"user", "add"}, tc, pw)
			if tc.code == 0 {
				var u httpclient.User
				if err := json.Unmarshal([]byte(r.stdout), &u); err != nil || u.Username != "bob" || u.CreatedAtMs == 0 {
					t.Fatalf("stdout is not the created user: %v\n%s", err, r.stdout)
				}
			}
		})
	}
}

// ensure that user grant replaces the grants (or removes them with --none) and refuses an empty or mixed choice.
func TestUserGrant(t *testing.T) {
	t.Parallel()
	cases := map[string]secretCase{
		"replace":          {args: []string{"alice", "--grant", "consume:orders-*,audit", "--grant", "create:tmp-*"}, line: "PUT /v1/users/alice/grants", body: `{"grants":[{"action":"consume","patterns":["orders-*","audit"]},{"action":"create","patterns":["tmp-*"]}]}`, out: `"action": "create"`},
		"remove_all":       {args: []string{"alice", "--none"}, line: "PUT /v1/users/alice/grants", body: `{"grants":[]}`, out: `"username": "alice"`},
		"neither":          {args: []string{"alice"}, code: 2, msg: "give the new grants with --grant"},
		"both":             {args: []string{"alice", "--none", "--grant", "admin"}, code: 2, msg: "--none and --grant are mutually exclusive"},
		"bad_grant":        {args: []string{"alice", "--grant", "produce"}, code: 2, msg: "needs at least one topic pattern"},
		"unknown_user":     {args: []string{"carol", "--none"}, code: 1, msg: "narad: http 404: not found", line: "PUT /v1/users/carol/grants", body: `{"grants":[]}`},
		"own_grants":       {args: []string{"admin", "--grant", "admin"}, code: 1, msg: "http 403: cannot modify your own grants", line: "PUT /v1/users/admin/grants", body: `{"grants":[{"action":"admin"}]}`},
		"escaped_username": {args: []string{"a b", "--none"}, code: 1, msg: "http 404", line: "PUT /v1/users/a%20b/grants", body: `{"grants":[]}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runSecretCase(t, []string{"user", "grant"}, tc)
			if name == "remove_all" && strings.Contains(r.stdout, "grants") {
				t.Fatalf("grants left: %s", r.stdout)
			}
		})
	}
}

// ensure that user ls prints the table (root marked, grants in --grant syntax, local update time) or JSON.
func TestUserLs(t *testing.T) {
	t.Parallel()
	f := newFakeAdmin(t)
	r := runCLI(t, cliOpts{}, append([]string{"user", "ls", "-s", f.url()}, asRoot...)...)
	want := [][]string{
		{"USERNAME", "ROOT", "GRANTS", "UPDATED"},
		{"admin", "yes", "admin", msTime(1783615500000)},
		{"alice", "-", "produce:orders-*,audit", "consume:orders-*", msTime(1783615561000)},
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.code != 0 || len(lines) != len(want) {
		t.Fatalf("exit %d stdout\n%s%s", r.code, r.stdout, r.stderr)
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d %q, want %q", i, lines[i], w)
		}
	}
	if reqs := f.requests(); len(reqs) != 1 || reqs[0].line != "GET /v1/users" {
		t.Fatalf("requests %+v", reqs)
	}
	r = runCLI(t, cliOpts{}, append([]string{"users", "ls", "--json", "-s", f.url()}, asRoot...)...)
	var got []httpclient.User
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 || !got[0].Root || len(got[1].Grants) != 2 {
		t.Fatalf("json %v: %s", err, r.stdout)
	}
}

// ensure that user get prints one user as JSON and reports an unknown one.
func TestUserGet(t *testing.T) {
	t.Parallel()
	cases := map[string]secretCase{
		"known":   {args: []string{"alice"}, line: "GET /v1/users/alice", out: `"patterns": [`},
		"unknown": {args: []string{"carol"}, code: 1, msg: "narad: http 404: not found", line: "GET /v1/users/carol"},
		"dot_dot": {args: []string{".."}, code: 1, msg: "bad username"},
		"no_name": {code: 2, msg: "needs 1 argument(s): username"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSecretCase(t, []string{"user", "get"}, tc)
		})
	}
}

// ensure that user rm asks first, deletes only on yes, skips the prompt with -f and shows refusals.
func TestUserRm(t *testing.T) {
	t.Parallel()
	const prompt = `delete user "alice"? [y/N] `
	cases := map[string]secretCase{
		"answer_yes": {args: []string{"alice"}, stdin: "y\n", msg: prompt, line: "DELETE /v1/users/alice", out: `user "alice" deleted`},
		"answer_no":  {args: []string{"alice"}, stdin: "n\n", code: 1, msg: prompt + "narad: user \"alice\" not deleted"},
		"no_answer":  {args: []string{"alice"}, code: 1, msg: prompt},
		"force":      {args: []string{"alice", "-f"}, line: "DELETE /v1/users/alice", out: `user "alice" deleted`},
		"root":       {args: []string{"admin", "--force"}, code: 1, msg: "http 403: the root admin cannot be deleted", line: "DELETE /v1/users/admin"},
		"unknown":    {args: []string{"carol", "--force"}, code: 1, msg: "http 404: not found", line: "DELETE /v1/users/carol"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runSecretCase(t, []string{"user", "rm"}, tc)
			if strings.Contains(r.stderr, prompt) == strings.Contains(strings.Join(tc.args, " "), "f") {
				t.Fatalf("prompt shown %v with args %v", strings.Contains(r.stderr, prompt), tc.args)
			}
		})
	}
}

// ensure that user passwd sends the new (and current) password from a flag or stdin, and refuses misuse.
func TestUserPasswd(t *testing.T) {
	t.Parallel()
	const next, wrong = "New-Secret-3", "Wrong-Secret-4"
	done := `password of user "alice" changed`
	line := "PUT /v1/users/alice/password"
	cases := map[string]secretCase{
		"admin_inline":         {args: []string{"alice", "--new-password", next}, line: line, body: `{"new_password":"` + next + `"}`, out: done},
		"admin_stdin":          {args: []string{"alice", "--new-password-stdin"}, stdin: next + "\n", line: line, body: `{"new_password":"` + next + `"}`, out: done},
		"self_current_stdin":   {args: []string{"alice", "--new-password", next, "--current-password-stdin"}, creds: asAlice, stdin: alicePass + "\n", line: line, body: `{"new_password":"` + next + `","current_password":"` + alicePass + `"}`, out: done},
		"self_current_inline":  {args: []string{"alice", "--new-password-stdin", "--current-password", alicePass}, creds: asAlice, stdin: next, line: line, body: `{"new_password":"` + next + `","current_password":"` + alicePass + `"}`, out: done},
		"self_wrong_current":   {args: []string{"alice", "--new-password", next, "--current-password", wrong}, creds: asAlice, code: 1, msg: "narad: http 403: current password is incorrect", line: line, body: `{"new_password":"` + next + `","current_password":"` + wrong + `"}`},
		"self_without_current": {args: []string{"alice", "--new-password", next}, creds: asAlice, code: 1, msg: "http 403: current password is incorrect", line: line, body: `{"new_password":"` + next + `"}`},
		"another_user":         {args: []string{"admin", "--new-password", next}, creds: asAlice, code: 1, msg: "http 403: admin required", line: "PUT /v1/users/admin/password", body: `{"new_password":"` + next + `"}`},
		"no_new_password":      {args: []string{"alice", "--current-password", alicePass}, code: 2, msg: "needs --new-password-stdin or --new-password"},
		"both_new_forms":       {args: []string{"alice", "--new-password", next, "--new-password-stdin"}, stdin: next, code: 2, msg: "--new-password and --new-password-stdin are mutually exclusive"},
		"both_current_forms":   {args: []string{"alice", "--new-password", next, "--current-password", wrong, "--current-password-stdin"}, stdin: wrong, code: 2, msg: "--current-password and --current-password-stdin are mutually exclusive"},
		"empty_current":        {args: []string{"alice", "--new-password", next, "--current-password="}, code: 2, msg: "--current-password is empty"},
		"two_on_stdin":         {args: []string{"alice", "--new-password-stdin", "--current-password-stdin"}, stdin: next + "\n" + wrong + "\n", code: 2, msg: "--new-password-stdin and --current-password-stdin cannot be used together"},
		"with_global_stdin":    {args: []string{"alice", "--new-password-stdin"}, creds: []string{"-u", "admin", "--password-stdin"}, stdin: rootPass + "\n" + next + "\n", code: 2, msg: "--password-stdin and --new-password-stdin cannot be used together"},
		"blank_stdin_line":     {args: []string{"alice", "--new-password-stdin"}, stdin: "\r\n", code: 1, msg: "--new-password-stdin: the first line of standard input is empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSecretCase(t, []string{"user", "passwd"}, tc, next, wrong)
		})
	}
}

// ensure that grants parse as action:patterns or a bare admin, and malformed ones are usage errors.
func TestParseGrant(t *testing.T) {
	t.Parallel()
	good := map[string]httpclient.Grant{
		"admin":             {Action: "admin"},
		"produce:a":         {Action: "produce", Patterns: []string{"a"}},
		"consume:a-*, b ,c": {Action: "consume", Patterns: []string{"a-*", "b", "c"}},
		"future:x":          {Action: "future", Patterns: []string{"x"}},
	}
	for in, want := range good {
		got, err := parseGrant(in)
		if err != nil || got.Action != want.Action || strings.Join(got.Patterns, "|") != strings.Join(want.Patterns, "|") {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ":", ":a", " :a", "create", "create:", "create: ", "create:a,", "admin:", "admin:x"} {
		var ue usageError
		if _, err := parseGrant(in); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", in, err)
		}
	}
}

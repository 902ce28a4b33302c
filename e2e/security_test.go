package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rootPassword is the NARAD_ADMIN_PASSWORD of the secured test nodes.
const rootPassword = "e2e-root-password"

// startSecured runs one `narad serve` with the defaults (security on) and
// NARAD_ADMIN_PASSWORD set when password is not empty; Raft binds with
// cluster.addr ":port" (no host), as `--cluster-port` alone gives it. It
// waits until the node is ready and, with a password, until root signs in.
func startSecured(t *testing.T, password string, extra ...string) *node {
	t.Helper()
	port := freePorts(t)
	env := []string{
		"NARAD_NODE_ID=s1",
		fmt.Sprintf("NARAD_HTTP_ADDR=127.0.0.1:%d", port),
		fmt.Sprintf("NARAD_CLUSTER_ADDR=:%d", port+1),
		"NARAD_LOG_LEVEL=info",
	}
	if password != "" {
		env = append(env, "NARAD_ADMIN_PASSWORD="+password)
	}
	n := spawn(t, t.TempDir(), port, append(env, extra...))
	n.waitReady()
	if password != "" {
		waitSignIn(t, n.url, "admin", password)
	}
	return n
}

// waitSignIn polls until user/password authenticates on url (the root
// account is seeded shortly after the node elects itself).
func waitSignIn(t *testing.T, url, user, password string) {
	t.Helper()
	deadline := time.Now().Add(nodeReadyTimeout)
	for {
		if call(t, url, user, password, "GET", "/v1/topics", "").status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never authenticated on %s", user, url)
		}
		time.Sleep(50 * time.Millisecond) // polling the node, bounded by the deadline
	}
}

// answer is one HTTP answer.
type answer struct {
	status int
	body   string
	header http.Header
}

// errorText is the error body's message, or the raw body.
func (a answer) errorText() string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(a.body), &e) == nil && e.Error != "" {
		return e.Error
	}
	return strings.TrimSpace(a.body)
}

// call sends one request as user (none when user is ""); POST, PUT and
// PATCH carry Content-Type: application/json (octet-stream for produce).
func call(t *testing.T, url, user, password, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	switch {
	case strings.HasSuffix(strings.SplitN(path, "?", 2)[0], "/produce"):
		req.Header.Set("Content-Type", "application/octet-stream")
	case method == "POST" || method == "PUT" || method == "PATCH":
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Narad-Client", "e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), header: resp.Header}
}

// want fails unless a has status (and, when msg is set, that error message).
func (a answer) want(t *testing.T, what string, status int, msg string) {
	t.Helper()
	if a.status != status || msg != "" && a.errorText() != msg {
		t.Fatalf("%s: got %d %q, want %d %q", what, a.status, a.body, status, msg)
	}
}

// ensure that `narad serve` with only NARAD_ADMIN_PASSWORD starts a secured
// node whose root signs in (conformance 16), that every route wants
// credentials (10, 11, 15), that an unknown user is never throttled (12)
// while a brute force on a real one reaches 429 (13), and that the probes
// stay open (14).
func TestSecuredNodeFromAdminPassword(t *testing.T) {
	n := startSecured(t, rootPassword)
	root := call(t, n.url, "admin", rootPassword, "GET", "/v1/users/admin", "")
	root.want(t, "root reads itself", 200, "")
	var u struct {
		Username string `json:"username"`
		Root     bool   `json:"root"`
	}
	if json.Unmarshal([]byte(root.body), &u) != nil || u.Username != "admin" || !u.Root || strings.Contains(root.body, "hash") {
		t.Fatalf("root account %s", root.body)
	}
	a := call(t, n.url, "", "", "GET", "/v1/topics", "")
	a.want(t, "no credentials", 401, "authentication required")
	if a.header.Get("WWW-Authenticate") != `Basic realm="narad"` {
		t.Fatalf("401 without the challenge: %v", a.header)
	}
	call(t, n.url, "", "", "GET", "/no-such-path", "").want(t, "unknown path, no credentials", 401, "")
	call(t, n.url, "admin", rootPassword, "GET", "/no-such-path", "").want(t, "unknown path, root", 404, "")
	for _, p := range []string{"/healthz", "/readyz"} {
		call(t, n.url, "", "", "GET", p, "").want(t, p, 200, "")
	}
	for i := range 20 {
		call(t, n.url, "ghost", fmt.Sprintf("guess-%d", i), "GET", "/v1/topics", "").want(t, "unknown user", 401, "")
	}
	call(t, n.url, "admin", rootPassword, "POST", "/v1/users", `{"username":"erin","password":"erin-pw","grants":[]}`).want(t, "create erin", 201, "")
	for i := range 5 {
		call(t, n.url, "erin", fmt.Sprintf("wrong-%d", i), "GET", "/v1/topics", "").want(t, "wrong password", 401, "")
	}
	call(t, n.url, "erin", "wrong-5", "GET", "/v1/topics", "").want(t, "sixth wrong password", 429, "too many failed authentication attempts")
	call(t, n.url, "erin", "erin-pw", "GET", "/v1/topics", "").want(t, "right password while throttled", 429, "")
	call(t, n.url, "admin", rootPassword, "GET", "/v1/topics", "").want(t, "root, cached, meanwhile", 200, "")
}

// ensure that a secured cluster's first start without NARAD_ADMIN_PASSWORD
// writes a generated root password to admin-password in the data
// directory, mode 0600, that it signs in, and that the log never shows it
// (conformance 229).
func TestSecuredNodeGeneratesAdminPassword(t *testing.T) {
	n := startSecured(t, "")
	path := filepath.Join(n.dataDir, "admin-password")
	var pw []byte
	deadline := time.Now().Add(nodeReadyTimeout)
	for {
		b, err := os.ReadFile(path)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			pw = bytes.TrimSpace(b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s: %v", path, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the node, bounded by the deadline
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s mode %v (%v), want 0600", path, st.Mode().Perm(), err)
	}
	waitSignIn(t, n.url, "admin", string(pw))
	if strings.Contains(n.logs.String(), string(pw)) {
		t.Fatal("the generated root password appears in the node's log")
	}
}

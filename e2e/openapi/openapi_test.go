package openapi

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// ensure that docs/openapi.yaml is a valid OpenAPI 3.1 document the
// validator can be built from.
func TestDocumentIsValid(t *testing.T) {
	s := loadSpec(t)
	if len(s.ops) == 0 {
		t.Fatal("the document has no operations")
	}
}

// ensure that a real secured node answers every documented operation, with
// requests and answers (successes and representative errors) that match
// docs/openapi.yaml, and that no documented operation goes unexercised.
func TestOpenAPI(t *testing.T) {
	s := loadSpec(t)
	rs := remotesSetup{target: startTarget(t)}
	ghost := unusedPort(t)
	rs.ghostURL = fmt.Sprintf("https://127.0.0.1:%d", ghost)
	n := startNode(t, remotesEnv(rs.target.port, ghost)...)
	cl := &client{url: n.url, spec: s, hits: map[string]map[int]int{}}
	t.Run("health", cl.health)
	t.Run("router", cl.router)
	t.Run("topics", cl.topics)
	t.Run("children", cl.children)
	t.Run("produce", cl.produce)
	t.Run("consume and ack", cl.consumeAndAck)
	t.Run("users", cl.users)
	t.Run("access", cl.access)
	t.Run("cluster", cl.cluster)
	t.Run("remotes", cl.remotes(rs))
	t.Run("remote children", cl.remoteChildren(rs))
	t.Run("every documented operation was exercised", cl.coverage)
}

func (cl *client) health(t *testing.T) {
	a := cl.do(t, call{method: "GET", path: "/healthz"}, 200)
	if string(a.body) != "{\"status\":\"ok\"}\n" {
		t.Errorf("healthz body %q", a.body)
	}
	cl.do(t, call{method: "GET", path: "/readyz"}, 200)
	a = cl.do(t, call{method: "GET", path: "/metrics", as: root}, 200)
	if !strings.Contains(string(a.body), "go_goroutines") {
		t.Errorf("metrics without go_goroutines:\n%.300s", a.body)
	}
	a = cl.do(t, call{method: "GET", path: "/metrics", badRequest: true}, 401)
	a.wantError(t, "authentication required")
	cl.do(t, call{method: "GET", path: "/metrics", as: &cred{rootUser, "wrong-password"}}, 401)
}

// router checks the multiplexer's own plain-text answers against the
// document's RouterNotFound and MethodNotAllowed components: they answer
// paths or methods no operation describes, so the validator cannot.
func (cl *client) router(t *testing.T) {
	cl.checkComponent(t, call{method: "GET", path: "/v1/topics/", as: root}, 404, "RouterNotFound")
	a := cl.checkComponent(t, call{method: "PUT", path: "/v1/topics", as: root, contentType: "application/json"}, 405, "MethodNotAllowed")
	if got := a.header.Get("Allow"); got != "GET, HEAD, POST" {
		t.Errorf("Allow: %q", got)
	}
}

// checkComponent sends c, wants status, and checks the answer against the
// named components/responses entry: its content type and exact text, and
// its required headers.
func (cl *client) checkComponent(t *testing.T, c call, status int, name string) answer {
	t.Helper()
	resp, err := http.DefaultClient.Do(c.request(cl.url))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: body}
	if a.status != status {
		t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, a.status, body, status)
	}
	r := cl.spec.model.Components.Responses.GetOrZero(name)
	if r == nil {
		t.Fatalf("components/responses/%s missing", name)
	}
	ct := strings.TrimSpace(strings.Split(a.header.Get("Content-Type"), ";")[0])
	mt := r.Content.GetOrZero(ct)
	if mt == nil {
		t.Fatalf("%s: content type %q not in components/responses/%s", c.path, ct, name)
	}
	if want := mt.Schema.Schema().Const; want != nil && want.Value != string(body) {
		t.Errorf("%s: body %q, documented %q", c.path, body, want.Value)
	}
	for h, hdr := range r.Headers.FromOldest() {
		if hdr.Required && a.header.Get(h) == "" {
			t.Errorf("%s: required header %s missing", c.path, h)
		}
	}
	return a
}

// coverage fails for each documented operation no exchange reached, and
// logs the statuses each one was seen with.
func (cl *client) coverage(t *testing.T) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	for _, op := range cl.spec.operations() {
		seen := cl.hits[op]
		if len(seen) == 0 {
			t.Errorf("%s is documented but the test never exercised it", op)
			continue
		}
		var codes []string
		for code := range seen {
			codes = append(codes, fmt.Sprint(code))
		}
		sort.Strings(codes)
		t.Logf("%-48s %s", op, strings.Join(codes, " "))
	}
}

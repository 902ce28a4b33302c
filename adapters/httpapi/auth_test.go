package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/access"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// stubAuth accepts one account and answers err for everything else.
type stubAuth struct {
	user, pass string
	grants     []meta.Grant
	err        error
}

func (s stubAuth) Authenticate(ctx context.Context, user string, pass []byte, _ string) (meta.User, error) {
	if user == s.user && string(pass) == s.pass {
		return meta.User{Username: user, Grants: s.grants}, nil
	}
	if s.err != nil {
		return meta.User{}, s.err
	}
	return meta.User{}, domain.ErrUnauthenticated
}

func basic(user, pass string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))}
}

type okReadiness struct{}

func (okReadiness) Ready() error       { return nil }
func (okReadiness) ShuttingDown() bool { return false }

func securedEngine(t *testing.T, sec Security) *gin.Engine {
	t.Helper()
	sec.Enabled = true
	routes := append(HealthRoutes(okReadiness{}),
		Route{Method: "GET", Path: "/metrics", Handle: func(c *gin.Context) { c.String(200, "narad_x 1\n") }},
		Route{Method: "GET", Path: "/v1/topics", Handle: func(c *gin.Context) { respondJSON(c, 200, map[string]string{"who": principalOf(c).Name}) }},
		Route{Method: "POST", Path: "/v1/topics", Handle: func(c *gin.Context) { c.Status(201) }},
		Route{Method: "DELETE", Path: "/v1/topics/:topic", Handle: func(c *gin.Context) {
			if allow(c, zap.NewNop(), accessModify()) {
				c.Status(http.StatusNoContent)
			}
		}},
	)
	return NewEngineWith(EngineOptions{Log: zap.NewNop(), Security: sec}, routes...)
}

// ensure that with security on every route but the probes needs
// credentials: 401 with the challenge (conformance 10, 11, 14), before
// routing (15) and before the 415 guard (156), /metrics included unless
// unauthenticated metrics are configured (159).
func TestAuthenticationGuardsEveryRoute(t *testing.T) {
	e := securedEngine(t, Security{Auth: stubAuth{user: "alice", pass: "pw"}})
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/topics"}, {"POST", "/v1/topics"}, {"GET", "/no-such-path"}, {"GET", "/metrics"}, {"PUT", "/v1/topics"},
	} {
		for _, hdr := range []map[string]string{nil, basic("alice", "wrong"), basic("bob", "pw"), {"Authorization": "Bearer x"}, {"Authorization": "Basic !!!"}} {
			rec := serve(e, c.method, c.path, hdr)
			if rec.Code != 401 || rec.Body.String() != "{\"error\":\"authentication required\"}\n" || rec.Header().Get("WWW-Authenticate") != `Basic realm="narad"` {
				t.Errorf("%s %s %v: %d %q %q", c.method, c.path, hdr, rec.Code, rec.Body.String(), rec.Header().Get("WWW-Authenticate"))
			}
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		for _, hdr := range []map[string]string{nil, basic("alice", "wrong")} {
			if rec := serve(e, "GET", p, hdr); rec.Code != 200 {
				t.Errorf("%s %v: %d", p, hdr, rec.Code)
			}
		}
	}
	ok := basic("alice", "pw")
	if rec := serve(e, "GET", "/no-such-path", ok); rec.Code != 404 {
		t.Errorf("unknown path with credentials: %d", rec.Code)
	}
	if rec := serve(e, "POST", "/v1/topics", ok); rec.Code != 415 {
		t.Errorf("POST without content type, with credentials: %d", rec.Code)
	}
	if rec := serve(e, "GET", "/v1/topics", ok); rec.Code != 200 || rec.Body.String() != "{\"who\":\"alice\"}\n" {
		t.Errorf("authenticated: %d %s", rec.Code, rec.Body.String())
	}
	open := securedEngine(t, Security{Auth: stubAuth{}, MetricsUnauthenticated: true})
	if rec := serve(open, "GET", "/metrics", nil); rec.Code != 200 {
		t.Errorf("metrics_unauthenticated: %d", rec.Code)
	}
}

// ensure that a throttled check answers 429, an unreadable user store 500
// "authentication unavailable", and a client gone mid-check nothing.
func TestAuthenticationFailures(t *testing.T) {
	throttled := securedEngine(t, Security{Auth: stubAuth{err: domain.ErrAuthThrottled}})
	if rec := serve(throttled, "GET", "/v1/topics", basic("a", "b")); rec.Code != 429 || rec.Body.String() != "{\"error\":\"too many failed authentication attempts\"}\n" {
		t.Errorf("throttled: %d %s", rec.Code, rec.Body.String())
	}
	down := securedEngine(t, Security{Auth: stubAuth{err: domain.ErrAuthUnavailable}})
	if rec := serve(down, "GET", "/v1/topics", basic("a", "b")); rec.Code != 500 || rec.Body.String() != "{\"error\":\"authentication unavailable\"}\n" {
		t.Errorf("store down: %d %s", rec.Code, rec.Body.String())
	}
}

// ensure that a denied request and a topic deletion leave an audit line
// naming the caller, and an allowed read leaves none.
func TestAuditOfDenialsAndDeletes(t *testing.T) {
	audit := &fake.Audit{}
	e := securedEngine(t, Security{Auth: stubAuth{user: "alice", pass: "pw"}, Audit: audit})
	serve(e, "GET", "/v1/topics", basic("alice", "pw"))
	if rec := serve(e, "DELETE", "/v1/topics/billing", basic("alice", "pw")); rec.Code != 403 {
		t.Fatalf("delete by a non-owner: %d", rec.Code)
	}
	got := audit.Events()
	if len(got) != 1 || got[0].Event != ports.AuditAccessDenied || got[0].Actor != "alice" || got[0].Reason != "only the topic owner or an admin may modify this topic" {
		t.Fatalf("audit %+v", got)
	}
	admin := securedEngine(t, Security{Auth: stubAuth{user: "root", pass: "pw", grants: []meta.Grant{{Action: "admin"}}}, Audit: audit})
	if rec := serve(admin, "DELETE", "/v1/topics/billing", basic("root", "pw")); rec.Code != 204 {
		t.Fatalf("admin delete: %d", rec.Code)
	}
	if n := audit.Count(ports.AuditTopicDelete); n != 1 {
		t.Fatalf("%d topic.delete lines", n)
	}
}

func accessModify() access.Request {
	return access.Request{Op: access.OpDelete, Topic: access.Topic{Name: "billing", Owner: "admin"}}
}

// FuzzAuthorizationHeader: any Authorization header (malformed, huge,
// non-UTF-8) answers 200 for the one good credential, else 401 with the
// challenge: never a 500, never a panic.
func FuzzAuthorizationHeader(f *testing.F) {
	for _, seed := range []string{"", "Basic", "Basic ", "Basic YWxpY2U6cHc=", "basic YWxpY2U6cHc=", "Basic !!!",
		"Basic " + base64.StdEncoding.EncodeToString([]byte("\xff\xfe:\x00")), "Bearer x", "Basic YWxpY2U=",
		"Basic " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("u", 70000)+":p"))} {
		f.Add(seed)
	}
	e := NewEngineWith(EngineOptions{Log: zap.NewNop(), Security: Security{Enabled: true, Auth: stubAuth{user: "alice", pass: "pw"}}},
		Route{Method: "GET", Path: "/v1/topics", Handle: func(c *gin.Context) { c.Status(200) }})
	f.Fuzz(func(t *testing.T, header string) {
		rec := serve(e, "GET", "/v1/topics", map[string]string{"Authorization": header})
		switch rec.Code {
		case 200:
			if u, p, ok := (&http.Request{Header: http.Header{"Authorization": {header}}}).BasicAuth(); !ok || u != "alice" || p != "pw" {
				t.Fatalf("%q let in", header)
			}
		case 401:
			if rec.Header().Get("WWW-Authenticate") == "" {
				t.Fatalf("%q: 401 without the challenge", header)
			}
		default:
			t.Fatalf("%q: %d %s", header, rec.Code, rec.Body.String())
		}
	})
}

package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"
)

type readiness struct {
	down bool
	err  error
}

func (r readiness) ShuttingDown() bool { return r.down }
func (r readiness) Ready() error       { return r.err }

func serve(e *gin.Engine, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// ensure that the router answers unknown paths, wrong methods and trailing slashes as api.md §0.4 says.
func TestRouterConventions(t *testing.T) {
	e := NewEngine(zap.NewNop(),
		Route{Method: "GET", Path: "/v1/topics", Handle: func(c *gin.Context) { c.Status(200) }},
		Route{Method: "POST", Path: "/v1/topics", Handle: func(c *gin.Context) { c.Status(201) }},
	)
	if rec := serve(e, "GET", "/nope", nil); rec.Code != 404 || rec.Body.String() != "404 page not found\n" {
		t.Errorf("unknown path: %d %q", rec.Code, rec.Body.String())
	}
	if rec := serve(e, "GET", "/v1/topics/", nil); rec.Code != 404 {
		t.Errorf("trailing slash: %d", rec.Code)
	}
	rec := serve(e, "PUT", "/v1/topics", map[string]string{"Content-Type": "application/json"})
	if rec.Code != 405 || rec.Header().Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("wrong method: %d Allow=%q", rec.Code, rec.Header().Get("Allow"))
	}
	if rec := serve(e, "PUT", "/v1/topics", nil); rec.Code != 415 {
		t.Errorf("PUT without content type: %d, want 415 before 405", rec.Code)
	}
	if rec := serve(e, "HEAD", "/v1/topics", nil); rec.Code != 200 {
		t.Errorf("HEAD on a GET route: %d", rec.Code)
	}
}

// ensure that a panicking handler answers 500 with the error body instead of killing the node.
func TestPanicBecomes500(t *testing.T) {
	e := NewEngine(zap.NewNop(), Route{Method: "GET", Path: "/boom", Handle: func(*gin.Context) { panic("bad") }})
	rec := serve(e, "GET", "/boom", nil)
	if rec.Code != 500 || rec.Body.String() != "{\"error\":\"internal error\"}\n" {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
}

// ensure that /healthz and /readyz answer per api.md §2.1-2.2.
func TestHealthRoutes(t *testing.T) {
	cases := []struct {
		r          readiness
		path, body string
		code       int
	}{
		{readiness{}, "/healthz", "{\"status\":\"ok\"}\n", 200},
		{readiness{down: true}, "/healthz", "{\"status\":\"shutting down\"}\n", 503},
		{readiness{}, "/readyz", "{\"status\":\"ready\"}\n", 200},
		{readiness{err: errors.New("metadata not caught up with the leader")}, "/readyz", "{\"error\":\"metadata not caught up with the leader\"}\n", 503},
	}
	for _, c := range cases {
		e := NewEngine(zap.NewNop(), HealthRoutes(c.r)...)
		rec := serve(e, http.MethodGet, c.path, nil)
		if rec.Code != c.code || rec.Body.String() != c.body {
			t.Errorf("%s %+v: %d %q", c.path, c.r, rec.Code, rec.Body.String())
		}
	}
}

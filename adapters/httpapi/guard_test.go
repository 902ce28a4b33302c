package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/narad/narad/domain"
)

func init() { gin.SetMode(gin.ReleaseMode) }

func guarded() *gin.Engine {
	r := gin.New()
	r.Use(guard415)
	ok := func(c *gin.Context) { c.Status(http.StatusNoContent) }
	r.POST("/v1/topics", ok)
	r.GET("/v1/topics", ok)
	r.DELETE("/v1/topics/x", ok)
	return r
}

// ensure that the 415 rule admits the two content types (with parameters) or X-Narad-Client, for POST/PUT/PATCH only (conformance 151, 153).
func TestGuard415(t *testing.T) {
	cases := []struct {
		method, ctype, client string
		want                  int
	}{
		{"POST", "", "", 415},
		{"POST", "text/plain", "", 415},
		{"POST", "application/json", "", 204},
		{"POST", "application/json; charset=utf-8", "", 204},
		{"POST", "application/octet-stream", "", 204},
		{"POST", "", "conformance", 204},
		{"PUT", "", "", 415},
		{"PATCH", "garbage;;", "", 415},
		{"GET", "", "", 204},
		{"DELETE", "", "", 204},
	}
	r := guarded()
	for _, c := range cases {
		path := "/v1/topics"
		if c.method == "DELETE" {
			path = "/v1/topics/x"
		}
		req := httptest.NewRequest(c.method, path, nil)
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		if c.client != "" {
			req.Header.Set(clientHeader, c.client)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != c.want && !(c.method == "PUT" || c.method == "PATCH") {
			t.Errorf("%s %q %q: %d want %d", c.method, c.ctype, c.client, rec.Code, c.want)
		}
		if c.want == 415 && rec.Code != 415 {
			t.Errorf("%s %q: %d, want 415 before routing", c.method, c.ctype, rec.Code)
		}
		if rec.Code == 415 {
			want := `{"error":"` + msg415 + "\"}\n"
			if rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" {
				t.Errorf("415 body %q type %q", rec.Body.String(), rec.Header().Get("Content-Type"))
			}
		}
	}
}

// ensure that domain errors map through the one table, wrapped or not, and unknown ones hide internals.
func TestStatusOf(t *testing.T) {
	cases := []struct {
		err  error
		code int
		msg  string
	}{
		{domain.ErrLeaseGone, 410, "receipt handle no longer matches an active reservation"},
		{wrap(domain.ErrWALFailed), 500, "produce failed"},
		{wrap(domain.ErrInvalidReceiptHandle), 400, "receipt handle is malformed"},
		{clientErr(400, "message required"), 400, "message required"},
		{wrap(errSecret), 500, "internal error"},
	}
	for _, c := range cases {
		code, msg := statusOf(c.err)
		if code != c.code || msg != c.msg {
			t.Errorf("%v: %d %q, want %d %q", c.err, code, msg, c.code, c.msg)
		}
	}
}

type secretErr struct{}

func (secretErr) Error() string { return "open /var/lib/narad/secret: permission denied" }

var errSecret error = secretErr{}

func wrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "ctx: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// ensure that a Refusal's detail is the client message and a bare sentinel speaks without its package prefix.
func TestStatusOfRefusals(t *testing.T) {
	code, msg := statusOf(wrap(domain.Refuse(domain.ErrInvalidArgument, "invalid argument: schema: missing property")))
	if code != 400 || msg != "invalid argument: schema: missing property" {
		t.Fatalf("%d %q", code, msg)
	}
	code, msg = statusOf(domain.ErrTopicNameCase)
	if code != 409 || msg != "topic name differs only in letter case from an existing topic" {
		t.Fatalf("%d %q", code, msg)
	}
	if code, _ := statusOf(wrap(domain.ErrNotOwner)); code != 421 {
		t.Fatalf("not owner: %d", code)
	}
}

// ensure that error bodies are not HTML-escaped: "must be >= 0" reads as the spec writes it.
func TestErrorBodyNotHTMLEscaped(t *testing.T) {
	if got := string(appendErrorBody(nil, `invalid partition: must be >= 0 & <tag>`)); got != "{\"error\":\"invalid partition: must be >= 0 & <tag>\"}\n" {
		t.Fatalf("%q", got)
	}
}

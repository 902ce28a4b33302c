package httpclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that New accepts http(s) base URLs and refuses anything else.
func TestNewValidatesServers(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		servers []string
		want    error
		norm    []string
	}{
		"no_server":         {servers: nil, want: httpclient.ErrNoServer},
		"http_with_slash":   {servers: []string{"http://127.0.0.1:7942/"}, norm: []string{"http://127.0.0.1:7942"}},
		"https_and_http":    {servers: []string{"https://a:1", " http://b:2 "}, norm: []string{"https://a:1", "http://b:2"}},
		"host_port_is_http": {servers: []string{"127.0.0.1:7942", "localhost:7942/"}, norm: []string{"http://127.0.0.1:7942", "http://localhost:7942"}},
		"empty_host":        {servers: []string{":7942"}, want: httpclient.ErrBadServer},
		"ftp_scheme":        {servers: []string{"ftp://host"}, want: httpclient.ErrBadServer},
		"query_not_allowed": {servers: []string{"http://h:1/?x=1"}, want: httpclient.ErrBadServer},
		"user_info_refused": {servers: []string{"http://u:p@h:1"}, want: httpclient.ErrBadServer},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := httpclient.New(httpclient.Options{Servers: tc.servers})
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if err == nil && fmt.Sprint(c.Servers()) != fmt.Sprint(tc.norm) {
				t.Fatalf("servers = %v, want %v", c.Servers(), tc.norm)
			}
		})
	}
}

// ensure that every request carries X-Narad-Client, User-Agent, Accept and, with a user, Basic auth.
func TestEveryRequestCarriesClientHeaders(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		user     string
		wantAuth bool
	}{
		"with_credentials":    {user: "alice", wantAuth: true},
		"without_credentials": {user: "", wantAuth: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, tc.user, canned{status: 204})
			ctx := context.Background()
			_ = c.Ack(ctx, "t", "0:1:2")
			_ = c.DeleteTopic(ctx, "t")
			_, _ = c.Consume(ctx, "t", httpclient.ConsumeOptions{})
			for _, r := range rec.requests() {
				if got := r.Header.Get("X-Narad-Client"); got != "narad-cli/test" {
					t.Errorf("%s %s: X-Narad-Client = %q", r.Method, r.Path, got)
				}
				if got := r.Header.Get("User-Agent"); got != "narad-cli/test" {
					t.Errorf("%s %s: User-Agent = %q", r.Method, r.Path, got)
				}
				if got := r.Header.Get("Accept"); got != "application/json" {
					t.Errorf("%s %s: Accept = %q", r.Method, r.Path, got)
				}
				if r.BasicOK != tc.wantAuth || (tc.wantAuth && (r.User != "alice" || r.Password != "pw")) {
					t.Errorf("%s %s: basic auth = %v %q:%q", r.Method, r.Path, r.BasicOK, r.User, r.Password)
				}
			}
		})
	}
}

// ensure that a status >= 400 becomes an *APIError "http <status>: <message>" from a JSON or plain body.
func TestErrorAnswersBecomeAPIErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		answer     canned
		want       string
		retryAfter time.Duration
	}{
		"json_error_body":    {answer: jsonAnswer(404, `{"error":"topic not found"}`), want: "http 404: topic not found"},
		"json_extra_fields":  {answer: jsonAnswer(409, `{"error":"cannot","reasons":["x"]}`), want: "http 409: cannot"},
		"plain_text":         {answer: canned{status: 503, body: "partition owner is down; retry later\n", header: map[string]string{"Retry-After": "1"}}, want: "http 503: partition owner is down; retry later", retryAfter: time.Second},
		"router_text":        {answer: canned{status: 405, body: "Method Not Allowed"}, want: "http 405: Method Not Allowed"},
		"empty_body":         {answer: canned{status: 500}, want: "http 500: internal server error"},
		"json_without_error": {answer: jsonAnswer(400, `{"message":"x"}`), want: `http 400: {"message":"x"}`},
		"long_body_is_cut":   {answer: canned{status: 502, body: strings.Repeat("a", 20000)}, want: "http 502: " + strings.Repeat("a", 8192)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, _ := newRecorder(t, "", tc.answer)
			_, err := c.Topic(context.Background(), "t")
			var ae *httpclient.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if err.Error() != tc.want {
				t.Fatalf("err = %q, want %q", err.Error(), tc.want)
			}
			if ae.RetryAfter != tc.retryAfter || httpclient.StatusOf(err) != tc.answer.status {
				t.Fatalf("retry after %v status %d", ae.RetryAfter, httpclient.StatusOf(err))
			}
		})
	}
}

// ensure that requests rotate round-robin over the configured servers.
func TestRequestsRotateOverServers(t *testing.T) {
	t.Parallel()
	hits := make([]int, 3)
	var urls []string
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits[i]++ // the client below is sequential
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	c, err := httpclient.New(httpclient.Options{Servers: urls})
	if err != nil {
		t.Fatal(err)
	}
	for range 9 {
		if err := c.DeleteTopic(context.Background(), "t"); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(hits) != "[3 3 3]" {
		t.Fatalf("hits = %v, want 3 each", hits)
	}
}

// ensure that a topic name is path-escaped, so a "/" cannot address another route.
func TestTopicNamesArePathEscaped(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: 204})
	if err := c.DeleteTopic(context.Background(), "a/b c"); err != nil {
		t.Fatal(err)
	}
	r := rec.requests()[0]
	if r.RawPath != "/v1/topics/a%2Fb%20c" || r.Path != "/v1/topics/a/b c" {
		t.Fatalf("raw path %q, path %q", r.RawPath, r.Path)
	}
}

// ensure that the per-request timeout ends a request the server never answers.
func TestTimeoutEndsAHungRequest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	c, err := httpclient.New(httpclient.Options{Servers: []string{srv.URL}, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Topic(context.Background(), "t"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
}

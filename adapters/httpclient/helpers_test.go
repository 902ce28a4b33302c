package httpclient_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// seen is one request as the test server received it.
type seen struct {
	Method   string
	Path     string // decoded
	RawPath  string // as sent (escaped)
	Query    map[string][]string
	Header   http.Header
	Body     []byte
	BasicOK  bool
	User     string
	Password string
}

// canned is the answer a test server gives.
type canned struct {
	status int
	body   string
	header map[string]string
}

// recorder is an httptest server that records requests and answers from a script.
type recorder struct {
	mu      sync.Mutex
	reqs    []seen
	answers []canned // one per request; the last repeats
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	user, pass, ok := req.BasicAuth()
	r.mu.Lock()
	r.reqs = append(r.reqs, seen{Method: req.Method, Path: req.URL.Path, RawPath: req.URL.EscapedPath(), Query: req.URL.Query(), Header: req.Header.Clone(), Body: b, BasicOK: ok, User: user, Password: pass})
	a := r.answers[min(len(r.reqs), len(r.answers))-1]
	r.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(a.status)
	_, _ = io.WriteString(w, a.body)
}

func (r *recorder) requests() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.reqs...)
}

// newRecorder starts a server answering with answers (the last repeats) and a
// client of it with credentials when user is set.
func newRecorder(t *testing.T, user string, answers ...canned) (*httpclient.Client, *recorder) {
	t.Helper()
	rec := &recorder{answers: answers}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := httpclient.New(httpclient.Options{Servers: []string{srv.URL}, User: user, Password: "pw", ClientName: "narad-cli/test"})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func jsonAnswer(status int, body string) canned {
	return canned{status: status, body: body + "\n", header: map[string]string{"Content-Type": "application/json"}}
}

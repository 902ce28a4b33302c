package httpclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// countingServer is an httptest server running h that counts the TCP
// connections it accepted.
func countingServer(t *testing.T, h http.Handler, tlsOn bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &conns
}

func pin(t *testing.T, o httpclient.Options) *httpclient.Pinned {
	t.Helper()
	c, err := httpclient.New(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Pin(c.Servers()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestPinnedProduceSendsWhatProduceSendsOnOneConnection(t *testing.T) {
	rec := &recorder{answers: []canned{jsonAnswer(202, `{}`)}}
	srv, conns := countingServer(t, rec, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}, User: "alice", Password: "pw", ClientName: "narad-cli/test"})
	for i := range 5 {
		if err := p.Produce(context.Background(), "a b/c", []byte(`{"n":`+string(rune('0'+i))+`}`)); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	reqs := rec.requests()
	if len(reqs) != 5 || conns.Load() != 1 {
		t.Fatalf("%d requests over %d connections, want 5 over 1", len(reqs), conns.Load())
	}
	r := reqs[4]
	switch {
	case r.Method != http.MethodPost, r.RawPath != "/v1/topics/a%20b%2Fc/produce", string(r.Body) != `{"n":4}`:
		t.Fatalf("request %s %s %q", r.Method, r.RawPath, r.Body)
	case r.Header.Get("X-Narad-Client") != "narad-cli/test", r.Header.Get("User-Agent") != "narad-cli/test":
		t.Fatalf("client headers %v", r.Header)
	case r.Header.Get("Content-Type") != "application/octet-stream", r.Header.Get("Accept") != "application/json":
		t.Fatalf("content headers %v", r.Header)
	case !r.BasicOK || r.User != "alice" || r.Password != "pw":
		t.Fatalf("credentials %v %q %q", r.BasicOK, r.User, r.Password)
	}
}

func TestPinnedProduceRefusalIsAnAPIErrorAndKeepsTheConnection(t *testing.T) {
	rec := &recorder{answers: []canned{
		{status: 503, body: `{"error":"owner down, retry"}`, header: map[string]string{"Retry-After": "1"}},
		jsonAnswer(202, `{}`),
	}}
	srv, conns := countingServer(t, rec, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}})
	err := p.Produce(context.Background(), "t", []byte("x"))
	var ae *httpclient.APIError
	if !errors.As(err, &ae) || ae.Status != 503 || ae.Message != "owner down, retry" || ae.RetryAfter != time.Second {
		t.Fatalf("err = %v, want the 503 as an APIError", err)
	}
	if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if conns.Load() != 1 {
		t.Fatalf("%d connections, want the refused request's connection reused", conns.Load())
	}
	if err := p.Produce(context.Background(), "t", nil); !errors.Is(err, httpclient.ErrEmptyMessage) {
		t.Fatalf("empty message: %v", err)
	}
}

func TestPinnedProduceDrainsAChunkedAnswerAndHonoursConnectionClose(t *testing.T) {
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			w.Header().Set("Connection", "close")
		}
		w.WriteHeader(202)
		w.(http.Flusher).Flush() // the body goes out chunked
		_, _ = w.Write([]byte(strings.Repeat("z", 5000)))
	})
	srv, conns := countingServer(t, h, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}})
	for i := range 4 {
		if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	if conns.Load() != 2 {
		t.Fatalf("%d connections, want 2 (the second answer closed the first)", conns.Load())
	}
}

func TestPinnedProduceRedialsAfterTheServerDropsTheConnection(t *testing.T) {
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		w.WriteHeader(202)
	})
	srv, conns := countingServer(t, h, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}})
	err := p.Produce(context.Background(), "t", []byte("x"))
	if err == nil || errors.As(err, new(*httpclient.APIError)) {
		t.Fatalf("err = %v, want a transport error", err)
	}
	if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if conns.Load() != 2 {
		t.Fatalf("%d connections, want a second one after the drop", conns.Load())
	}
}

func TestPinnedProduceStopsOnCancelAndOnTheClientTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Narad-Client") == "stall" || strings.Contains(r.URL.Path, "stall") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(202)
	})
	srv, _ := countingServer(t, h, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Produce(ctx, "stall", []byte("x")) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled produce: %v", err)
	}
	if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
		t.Fatalf("produce after a cancel: %v", err)
	}
	short := pin(t, httpclient.Options{Servers: []string{srv.URL}, Timeout: 50 * time.Millisecond})
	var ne net.Error
	if err := short.Produce(context.Background(), "stall", []byte("x")); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("produce past the client timeout: %v", err)
	}
}

func TestPinnedProduceSpeaksTLSWithTheTransportsConfig(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || r.ProtoMajor != 1 {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(202)
	}), true)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}, HTTPClient: srv.Client()})
	for range 3 {
		if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if conns.Load() != 1 {
		t.Fatalf("%d connections, want 1", conns.Load())
	}
}

func TestPinRefusesAnAddressThatIsNotABaseURL(t *testing.T) {
	c, err := httpclient.New(httpclient.Options{Servers: []string{"http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ftp://h:1", "http://", "http://h:1/x", "::"} {
		if _, err := c.Pin(s); !errors.Is(err, httpclient.ErrBadServer) {
			t.Errorf("Pin(%q) = %v, want ErrBadServer", s, err)
		}
	}
}

func TestPinnedProducePassesOverEarlyHintsAndRefusesARedirect(t *testing.T) {
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Link", "</x>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(202)
	})
	srv, conns := countingServer(t, h, false)
	p := pin(t, httpclient.Options{Servers: []string{srv.URL}})
	if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
		t.Fatalf("202 after 103: %v", err)
	}
	err := p.Produce(context.Background(), "t", []byte("x"))
	if err == nil || !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("307: %v, want ErrMalformedReply", err)
	}
	if err := p.Produce(context.Background(), "t", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if conns.Load() != 2 {
		t.Fatalf("%d connections, want a fresh one after the redirect", conns.Load())
	}
}

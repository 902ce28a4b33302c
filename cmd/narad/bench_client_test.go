package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ensure that the http mode's client is a clone of http.DefaultTransport
// with its settings untouched: no larger idle pool, same dialer and timeouts.
func TestDefaultTransportClientIsUntouched(t *testing.T) {
	t.Parallel()
	hc := defaultTransportClient()
	got, ok := hc.Transport.(*http.Transport)
	want := http.DefaultTransport.(*http.Transport)
	if !ok || got == want || hc.Timeout != 0 {
		t.Fatalf("transport %T (shared: %v), timeout %v", hc.Transport, got == want, hc.Timeout)
	}
	if got.MaxIdleConns != want.MaxIdleConns || got.MaxIdleConnsPerHost != want.MaxIdleConnsPerHost || got.MaxConnsPerHost != want.MaxConnsPerHost ||
		got.IdleConnTimeout != want.IdleConnTimeout || got.TLSHandshakeTimeout != want.TLSHandshakeTimeout || got.ExpectContinueTimeout != want.ExpectContinueTimeout ||
		got.ForceAttemptHTTP2 != want.ForceAttemptHTTP2 || got.DisableKeepAlives != want.DisableKeepAlives || got.DisableCompression != want.DisableCompression ||
		got.DialContext == nil || got.Proxy == nil {
		t.Fatalf("transport settings differ from http.DefaultTransport's: %+v", got)
	}
}

// ensure that with --client http (the default) every request, consumes and
// acks included, goes through net/http's transport, and that with
// --client pinned single-message produces bypass it as before.
func TestBenchClientModesTransport(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args          []string
		pinnedProduce bool // single produces skip net/http
	}{
		"default_is_http":     {args: []string{"--consumers", "2"}},
		"http_batches":        {args: []string{"--client", "http", "--produce-batch", "7", "--consumers", "2", "--consume-batch", "10"}},
		"pinned_produce_only": {args: []string{"--client", "pinned"}, pinnedProduce: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("bench", 3)
			var viaNetHTTP atomic.Int64
			ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { viaNetHTTP.Add(1) }})
			args := append([]string{"bench", "bench", "--count", "60", "--producers", "3", "--consume-wait", "50ms", "--json", "-s", b.url()}, tc.args...)
			r := runCLI(t, cliOpts{ctx: ctx}, args...)
			var rep benchReport
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Produced != 60 {
				t.Fatalf("exit %d %v: %s %s", r.code, err, r.stdout, r.stderr)
			}
			reqs := b.requests()
			singles := 0
			for _, q := range reqs {
				single := q.line == "POST /v1/topics/bench/produce"
				if single {
					singles++
				}
				// net/http's transport asks for gzip on its own; Pinned does not.
				if gz := q.header.Get("Accept-Encoding") == "gzip"; gz == (single && tc.pinnedProduce) {
					t.Fatalf("%s: Accept-Encoding %q", q.line, q.header.Get("Accept-Encoding"))
				}
			}
			n := int(viaNetHTTP.Load())
			if tc.pinnedProduce {
				if singles != 60 || n != len(reqs)-singles {
					t.Fatalf("%d connections handed out by net/http for %d requests, %d of them single produces", n, len(reqs), singles)
				}
				if c := b.connections(); c != 3+1 {
					t.Fatalf("%d connections, want one per producer and one for the two scrapes", c)
				}
			} else if n < len(reqs) {
				t.Fatalf("net/http handed out %d connections for %d requests", n, len(reqs))
			}
		})
	}
}

// barrier holds requests until size of them wait, or a second passes, then
// lets them all go at once.
type barrier struct {
	mu   sync.Mutex
	size int
	n    int
	ch   chan struct{}
}

func (b *barrier) wait() {
	b.mu.Lock()
	ch := b.ch
	if b.n++; b.n == b.size {
		close(b.ch)
		b.ch, b.n = make(chan struct{}), 0
	}
	b.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(time.Second):
	}
}

// ensure that the http mode keeps net/http's default idle pool (two kept
// connections per host): when the producers' answers come back together and
// --rate holds their next produces back, all their connections are idle at
// once, and all but two are closed and dialed again; the pinned mode keeps
// exactly one connection per producer.
func TestBenchHTTPModeKeepsDefaultIdlePool(t *testing.T) {
	t.Parallel()
	const producers, rounds = 8, 20
	for mode, check := range map[string]func(conns int) bool{
		"http":   func(c int) bool { return c > producers },
		"pinned": func(c int) bool { return c == producers },
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			bar := &barrier{size: producers, ch: make(chan struct{})}
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/produce") {
					http.NotFound(w, r)
					return
				}
				bar.wait()
				w.WriteHeader(http.StatusAccepted)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			t.Cleanup(srv.Close)
			metrics := newFakeMetrics(t, 0, 0.1, nil) // scrapes elsewhere, so srv counts produce connections only
			r := runCLI(t, cliOpts{}, "bench", "bench", "--client", mode, "--count", strconv.Itoa(producers*rounds), "--producers", strconv.Itoa(producers), "--rate", "500", "-s", srv.URL, "--metrics", metrics.url())
			if r.code != 0 || !strings.Contains(r.stdout, strconv.Itoa(producers*rounds)+" accepted") {
				t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			if c := int(conns.Load()); !check(c) {
				t.Fatalf("%s mode: %d connections for %d producers over %d rounds", mode, c, producers, rounds)
			}
		})
	}
}

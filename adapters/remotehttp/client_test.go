package remotehttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// seenRequest is what the test server saw of one request.
type seenRequest struct {
	method, path, auth, agent, contentType, encoding string
	protoMajor                                       int
	body                                             []byte
}

// recorder is a handler that records requests and answers 200 "ok".
type recorder struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.seen = append(rec.seen, seenRequest{
		method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"),
		agent: r.Header.Get("User-Agent"), contentType: r.Header.Get("Content-Type"),
		encoding: r.Header.Get("Content-Encoding"), protoMajor: r.ProtoMajor, body: body,
	})
	rec.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (rec *recorder) last(t *testing.T) seenRequest {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) == 0 {
		t.Fatal("the server saw no request")
	}
	return rec.seen[len(rec.seen)-1]
}

// ensure that a request reaches the remote over verified TLS and HTTP/1.1
// with the endpoint path plus the request path, the body and its headers
// and the Authorization header; that the first answer reports the new
// connection and the certificate's expiry; and that the next request
// reuses the connection.
func TestDoSendsRequest(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ts := newTestServer(t, rec)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ts.endpoint("/base/"))
	answer, err := c.Do(context.Background(), ports.RemoteRequest{
		Method: http.MethodPost, Path: "/v1/topics/orders/produce/batch",
		Body: []byte(`{"messages":[]}`), ContentEncoding: "zstd",
	})
	if err != nil {
		t.Fatal(err)
	}
	if answer.Status != http.StatusOK || string(answer.Body) != "ok" || answer.RetryAfter != 0 {
		t.Fatalf("answer %+v", answer)
	}
	if answer.ConnectTime <= 0 || !answer.CertNotAfter.Equal(ts.Certificate().NotAfter) {
		t.Fatalf("new connection: ConnectTime %v, CertNotAfter %v", answer.ConnectTime, answer.CertNotAfter)
	}
	got := rec.last(t)
	want := seenRequest{
		method: http.MethodPost, path: "/base/v1/topics/orders/produce/batch", auth: "Basic c2VuZGVyOnNlY3JldA==",
		agent: "narad-remote", contentType: "application/json", encoding: "zstd", protoMajor: 1, body: []byte(`{"messages":[]}`),
	}
	if got.method != want.method || got.path != want.path || got.auth != want.auth || got.agent != want.agent ||
		got.contentType != want.contentType || got.encoding != want.encoding || got.protoMajor != 1 || !bytes.Equal(got.body, want.body) {
		t.Fatalf("server saw %+v, want %+v", got, want)
	}
	again, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics/orders"})
	if err != nil {
		t.Fatal(err)
	}
	if again.ConnectTime != 0 || !again.CertNotAfter.IsZero() {
		t.Fatalf("reused connection reported as new: %+v", again)
	}
	if got := rec.last(t); got.contentType != "" || got.encoding != "" || got.path != "/base/v1/topics/orders" {
		t.Fatalf("bodiless request seen as %+v", got)
	}
	if n := ts.conns.Load(); n != 1 {
		t.Fatalf("%d connections for two sequential requests, want 1", n)
	}
}

// ensure that an anonymous request carries no Authorization header.
func TestDoAnonymousOmitsAuthorization(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ts := newTestServer(t, rec)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ts.endpoint(""))
	if _, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet, Path: "/v1/topics", Anonymous: true}); err != nil {
		t.Fatal(err)
	}
	if got := rec.last(t); got.auth != "" || got.path != "/v1/topics" {
		t.Fatalf("server saw %+v", got)
	}
}

// ensure that a redirect is an answer: the 302 comes back and its
// Location is never fetched, so the credential stays with the remote.
func TestDoDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var fetched atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target", http.StatusFound)
	})
	mux.HandleFunc("/target", func(http.ResponseWriter, *http.Request) { fetched.Add(1) })
	ts := newTestServer(t, mux)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ts.endpoint(""))
	answer, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodPost, Path: "/moved", Body: []byte("{}")})
	if err != nil {
		t.Fatal(err)
	}
	if answer.Status != http.StatusFound || fetched.Load() != 0 {
		t.Fatalf("status %d, Location fetched %d times", answer.Status, fetched.Load())
	}
}

// ensure that a certificate the CA bundle does not vouch for, the system
// roots against a self-signed server, or a server that does not speak TLS
// fail as ErrRemoteTLS.
func TestDoTLSVerification(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &recorder{})
	tr := newTransport(t, ts.loopbackOptions())
	for name, ca := range map[string]string{"wrong_ca": selfSignedPEM(t), "system_roots": ""} {
		ep := ts.endpoint("")
		ep.CAPEM = ca
		_, err := newClient(t, tr, ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
		if !errors.Is(err, domain.ErrRemoteTLS) {
			t.Errorf("%s: %v, want ErrRemoteTLS", name, err)
		}
		if err != nil && strings.Contains(err.Error(), ep.Authorization) {
			t.Errorf("%s: error %q holds the Authorization header", name, err)
		}
	}
	plain := httptest.NewServer(&recorder{})
	t.Cleanup(plain.Close)
	plainPort := plain.Listener.Addr().(*net.TCPAddr).Port
	o := ts.loopbackOptions()
	o.AllowedPorts = []int{plainPort}
	ep := ts.endpoint("")
	ep.URL = "https://127.0.0.1:" + strconv.Itoa(plainPort)
	_, err := newClient(t, newTransport(t, o), ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
	if !errors.Is(err, domain.ErrRemoteTLS) {
		t.Errorf("plain HTTP server: %v, want ErrRemoteTLS", err)
	}
}

// ensure that the guard runs at dial time: a client built without any
// resolution still never connects to a refused address, port or host.
func TestDoRefusedAtDial(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &recorder{})
	seen := &reasons{}
	loopback := ts.loopbackOptions()
	cases := map[string]struct {
		o    remotehttp.Options
		want string
	}{
		"no_allow_addresses": {remotehttp.Options{AllowedPorts: []int{ts.port}, Metrics: seen.add}, remotehttp.ReasonLoopback},
		"port_not_allowed":   {remotehttp.Options{AllowAddresses: loopback.AllowAddresses, Metrics: seen.add}, remotehttp.ReasonPort},
		"host_not_listed": {remotehttp.Options{
			AllowedPorts: loopback.AllowedPorts, AllowAddresses: loopback.AllowAddresses,
			AllowedHosts: []string{"*.example.com"}, Metrics: seen.add,
		}, remotehttp.ReasonHost},
	}
	for name, tc := range cases {
		c := newClient(t, newTransport(t, tc.o), ts.endpoint(""))
		_, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
		if !errors.Is(err, domain.ErrDestinationRefused) || refusalReason(t, err) != tc.want {
			t.Errorf("%s: %v, want a %s refusal", name, err, tc.want)
		}
	}
	if n := ts.conns.Load(); n != 0 {
		t.Fatalf("the server accepted %d connections", n)
	}
	got := seen.list()
	if len(got) != len(cases) {
		t.Fatalf("metrics saw %v, want one reason per refused dial", got)
	}
	for _, r := range got {
		if !strings.HasPrefix(r, "dr/") {
			t.Fatalf("a refusal not labelled with the remote: %v", got)
		}
	}
}

// ensure that a DNS answer that changes after CheckURL (rebinding to
// loopback) is refused at dial time, and that the client resolves through
// the transport's resolver, verifying TLS against the URL's host name.
func TestDoResolvesAtEveryDial(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &recorder{})
	resolver := newFakeResolver(map[string][]string{
		"rebind.example.com": {"8.8.8.8"},
		"example.com":        {"127.0.0.1"},
	}).then("rebind.example.com", "127.0.0.1")
	port := strconv.Itoa(ts.port)
	rebind := "https://rebind.example.com:" + port
	tr := newTransport(t, remotehttp.Options{AllowedPorts: []int{ts.port}, Resolver: resolver})
	canonical, err := tr.CheckURL(context.Background(), rebind)
	if err != nil {
		t.Fatalf("CheckURL with a public answer: %v", err)
	}
	ep := ts.endpoint("")
	ep.URL = canonical
	_, err = newClient(t, tr, ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
	if refusalReason(t, err) != remotehttp.ReasonLoopback {
		t.Fatalf("rebound dial: %v, want a loopback refusal", err)
	}
	if n := ts.conns.Load(); n != 0 {
		t.Fatalf("the server accepted %d connections", n)
	}

	allowed := ts.loopbackOptions()
	allowed.Resolver = resolver
	ep.URL = "https://example.com:" + port // a name on the test certificate
	answer, err := newClient(t, newTransport(t, allowed), ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
	if err != nil || answer.Status != http.StatusOK {
		t.Fatalf("resolved dial: %+v %v", answer, err)
	}
}

// ensure that a remote slower than the request timeout, and a closed
// port, fail as ErrRemoteUnavailable, and that the caller's own
// cancellation comes back as ctx.Err().
func TestDoUnavailable(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	block := func(r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(_ http.ResponseWriter, r *http.Request) { block(r) })
	mux.HandleFunc("/watched", func(_ http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		block(r)
	})
	ts := newTestServer(t, mux)
	t.Cleanup(func() { close(release) }) // before the server closes
	tr := newTransport(t, ts.loopbackOptions())
	ep := ts.endpoint("")
	ep.Limits = limits(100 * time.Millisecond)
	_, err := newClient(t, tr, ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet, Path: "/slow"})
	if !errors.Is(err, domain.ErrRemoteUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow remote: %v, want ErrRemoteUnavailable alone", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	ep.Limits = limits(time.Minute)
	if _, err := newClient(t, tr, ep).Do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/watched"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v, want context.Canceled", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	o := ts.loopbackOptions()
	o.AllowedPorts = []int{closedPort}
	ep.URL = "https://127.0.0.1:" + strconv.Itoa(closedPort)
	_, err = newClient(t, newTransport(t, o), ep).Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
	if !errors.Is(err, domain.ErrRemoteUnavailable) {
		t.Fatalf("closed port: %v, want ErrRemoteUnavailable", err)
	}
}

// ensure that Retry-After in seconds is read, and that a huge answer body
// is cut at ports.RemoteAnswerBodyMaxBytes.
func TestDoAnswerRetryAfterAndBodyBound(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/throttled", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	mux.HandleFunc("/dated", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 4<<20))
	})
	ts := newTestServer(t, mux)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ts.endpoint(""))
	ctx := context.Background()
	answer, err := c.Do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/throttled"})
	if err != nil || answer.Status != http.StatusTooManyRequests || answer.RetryAfter != 7*time.Second {
		t.Fatalf("throttled: %+v %v", answer, err)
	}
	answer, err = c.Do(ctx, ports.RemoteRequest{Method: http.MethodPost, Path: "/dated"})
	if err != nil || answer.RetryAfter != 0 {
		t.Fatalf("dated Retry-After: %+v %v", answer, err)
	}
	answer, err = c.Do(ctx, ports.RemoteRequest{Method: http.MethodGet, Path: "/huge"})
	if err != nil || len(answer.Body) != ports.RemoteAnswerBodyMaxBytes {
		t.Fatalf("huge: %d bytes, %v", len(answer.Body), err)
	}
}

// ensure that HTTP_PROXY and HTTPS_PROXY are ignored: the request goes
// straight to the remote, not to the proxy (which never answers).
func TestDoIgnoresProxyEnvironment(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", "http://"+proxy.Addr().String())
	t.Setenv("HTTPS_PROXY", "http://"+proxy.Addr().String())
	t.Setenv("NO_PROXY", "")
	ts := newTestServer(t, &recorder{})
	ep := ts.endpoint("")
	ep.Limits = limits(5 * time.Second)
	c := newClient(t, newTransport(t, ts.loopbackOptions()), ep)
	if remotehttp.ProxyConfigured(c) {
		t.Fatal("the client's pool has a proxy function")
	}
	answer, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet})
	if err != nil || answer.Status != http.StatusOK || ts.conns.Load() != 1 {
		t.Fatalf("%+v %v, server connections %d", answer, err, ts.conns.Load())
	}
}

// ensure that NewClient refuses an unusable URL or CA bundle with
// ErrRemoteURL, and a request path that would leave the remote.
func TestNewClientRefuses(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &recorder{})
	tr := newTransport(t, ts.loopbackOptions())
	ca := selfSignedPEM(t)
	bad := map[string]ports.RemoteEndpoint{
		"http_url":        {URL: "http://127.0.0.1"},
		"user_info":       {URL: "https://u:p@127.0.0.1"},
		"ca_not_pem":      {URL: "https://127.0.0.1", CAPEM: "not a certificate"},
		"ca_junk_before":  {URL: "https://127.0.0.1", CAPEM: "junk\n" + ca},
		"ca_junk_after":   {URL: "https://127.0.0.1", CAPEM: ca + "junk"},
		"ca_private_key":  {URL: "https://127.0.0.1", CAPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
		"ca_bad_der":      {URL: "https://127.0.0.1", CAPEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
		"ca_17_certs":     {URL: "https://127.0.0.1", CAPEM: strings.Repeat(ca, 17)},
		"ca_whitespace":   {URL: "https://127.0.0.1", CAPEM: " \n "},
		"ca_over_64_kib":  {URL: "https://127.0.0.1", CAPEM: ca + strings.Repeat(" ", 64<<10)},
		"ca_pem_headers":  {URL: "https://127.0.0.1", CAPEM: strings.Replace(ca, "-----\n", "-----\nProc-Type: 4,ENCRYPTED\n\n", 1)},
		"url_with_query":  {URL: "https://127.0.0.1/?a"},
		"url_with_zoneid": {URL: "https://[fe80::1%25lo]"},
	}
	for name, ep := range bad {
		if c, err := tr.NewClient(ep); !errors.Is(err, domain.ErrRemoteURL) {
			if c != nil {
				c.Close()
			}
			t.Errorf("%s: %v, want ErrRemoteURL", name, err)
		}
	}
	if c, err := tr.NewClient(ports.RemoteEndpoint{URL: "https://127.0.0.1", CAPEM: strings.Repeat(ca, 16)}); err != nil {
		t.Errorf("16 certificates: %v", err)
	} else {
		c.Close()
	}
	c := newClient(t, tr, ts.endpoint(""))
	for _, path := range []string{"v1/topics", "@evil.example.com/", "/#frag"} {
		if _, err := c.Do(context.Background(), ports.RemoteRequest{Method: http.MethodGet, Path: path}); !errors.Is(err, domain.ErrRemoteURL) {
			t.Errorf("path %q: %v, want ErrRemoteURL", path, err)
		}
	}
}

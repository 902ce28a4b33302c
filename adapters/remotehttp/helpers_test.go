package remotehttp_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/remotehttp"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// fakeResolver answers from a table; a host with several answers gets
// them in turn, the last one repeating (a DNS answer that changes).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

func newFakeResolver(answers map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for host, addrs := range answers {
		r.answers[host] = [][]netip.Addr{parseAddrs(addrs)}
	}
	return r
}

// then adds the answer host gets from its next lookup on.
func (r *fakeResolver) then(host string, addrs ...string) *fakeResolver {
	r.answers[host] = append(r.answers[host], parseAddrs(addrs))
	return r
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(answers)-1)
	r.calls[host]++
	return answers[i], nil
}

func parseAddrs(addrs []string) []netip.Addr {
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// testServer is an httptest TLS server on 127.0.0.1 that counts the
// connections it accepted and closed.
type testServer struct {
	*httptest.Server
	port   int
	caPEM  string
	conns  atomic.Int64
	closed atomic.Int64
}

func newTestServer(t *testing.T, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{Server: httptest.NewUnstartedServer(h)}
	ts.EnableHTTP2 = true // offered; the client must still speak HTTP/1.1
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			ts.conns.Add(1)
		case http.StateClosed, http.StateHijacked:
			ts.closed.Add(1)
		}
	}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ts.port = ts.Listener.Addr().(*net.TCPAddr).Port
	ts.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	return ts
}

// loopbackOptions lets the guard through to the test server on 127.0.0.1.
func (ts *testServer) loopbackOptions() remotehttp.Options {
	return remotehttp.Options{
		AllowedPorts:   []int{ts.port},
		AllowAddresses: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
}

// endpoint is the test server as a remote, trusted through its own CA.
func (ts *testServer) endpoint(path string) ports.RemoteEndpoint {
	return ports.RemoteEndpoint{
		Name:          "dr",
		URL:           "https://127.0.0.1:" + strconv.Itoa(ts.port) + path,
		Authorization: "Basic c2VuZGVyOnNlY3JldA==",
		CAPEM:         ts.caPEM,
	}
}

func newTransport(t *testing.T, o remotehttp.Options) *remotehttp.Transport {
	t.Helper()
	tr, err := remotehttp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// newClient builds a client closed when the test ends (before the
// servers it talks to).
func newClient(t *testing.T, tr *remotehttp.Transport, ep ports.RemoteEndpoint) ports.RemoteClient {
	t.Helper()
	c, err := tr.NewClient(ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// limits are small, test-friendly limits; NewClient takes values outside
// the API bounds.
func limits(requestTimeout time.Duration) meta.RemoteLimits {
	return meta.RemoteLimits{
		MaxInFlight:       4,
		RequestTimeoutMs:  requestTimeout.Milliseconds(),
		IdleConnTimeoutMs: 30_000,
		ConnMaxAgeMs:      300_000,
	}
}

// selfSignedPEM is a CA certificate the test server was not issued by.
func selfSignedPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "other test ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// refusalReason is the reason of a *RefusedError, or "" for nil.
func refusalReason(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var r *remotehttp.RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("error %v is not a *RefusedError", err)
	}
	return r.Reason
}

// waitFor polls cond until it holds or five seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// reasons records the reasons the Metrics hook is called with.
type reasons struct {
	mu  sync.Mutex
	got []string
}

// add records one refusal as "remote/reason".
func (r *reasons) add(remote, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, remote+"/"+reason)
}

func (r *reasons) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/loopbackport"
)

// remoteCA is a certificate authority made for one test and the server
// certificate it signed for 127.0.0.1 and localhost, which every TLS proxy
// of the test serves. A remote trusts it through its ca_pem (api.md §2.18).
type remoteCA struct {
	pem  string // the CA certificate as PEM
	leaf tls.Certificate
}

// newRemoteCA makes a self-signed ECDSA P-256 CA and a leaf for loopback.
func newRemoteCA(t *testing.T) remoteCA {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := func() *big.Int {
		n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	caKey, leafKey := newKey(), newKey()
	notBefore, notAfter := time.Now().Add(-time.Hour), time.Now().Add(30*24*time.Hour)
	caTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "e2e remote CA"},
		NotBefore: notBefore, NotAfter: notAfter, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: notBefore, NotAfter: notAfter, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return remoteCA{
		pem:  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		leaf: tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey},
	}
}

// caClient is an HTTP client that trusts the test CA alone.
func caClient(t *testing.T, ca remoteCA) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ca.pem)) {
		t.Fatal("test CA does not parse")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy, tr.TLSClientConfig = nil, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// tlsProxy is a TLS reverse proxy on loopback in front of one target node:
// the ingress that terminates TLS in production, since a remote's URL must
// be https (api.md §2.18) while a node serves plain HTTP. cut closes its
// listener and every connection, so dials are refused until heal listens
// on the same port again.
type tlsProxy struct {
	t         *testing.T
	port      int
	backend   *url.URL
	cert      tls.Certificate
	transport *http.Transport
	batches   atomic.Int64 // batch produce requests forwarded (api.md §2.13.1)

	mu  sync.Mutex
	srv *http.Server // nil while cut
}

// startTLSProxy listens on a free loopback port and forwards to backend
// (a node's http://127.0.0.1:port); Cleanup closes it.
func startTLSProxy(t *testing.T, ca remoteCA, backend string) *tlsProxy {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy, tr.MaxIdleConnsPerHost, tr.ForceAttemptHTTP2 = nil, 64, false
	p := &tlsProxy{t: t, backend: u, cert: ca.leaf, transport: tr}
	// Below the ephemeral range, so heal finds the port unbound after a cut.
	p.port = loopbackport.Pick(t, 1)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
	if err != nil {
		t.Fatal(err)
	}
	p.serve(ln)
	t.Cleanup(func() { p.cut(); tr.CloseIdleConnections() })
	return p
}

// url is what a remote names: https on the proxy's port.
func (p *tlsProxy) url() string { return fmt.Sprintf("https://127.0.0.1:%d", p.port) }

func (p *tlsProxy) serve(ln net.Listener) {
	quiet := log.New(io.Discard, "", 0)
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(p.backend)
			r.SetXForwarded()
		},
		Transport: p.transport,
		ErrorLog:  quiet,
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/produce/batch") {
			p.batches.Add(1)
		}
		rp.ServeHTTP(w, r)
	})
	cfg := &tls.Config{Certificates: []tls.Certificate{p.cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	srv := &http.Server{Handler: handler, ErrorLog: quiet, ReadHeaderTimeout: 30 * time.Second}
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	go func() { _ = srv.Serve(tls.NewListener(ln, cfg)) }()
}

// cut stops forwarding: the listener and every open connection close, so
// requests in flight break and new dials are refused.
func (p *tlsProxy) cut() {
	p.mu.Lock()
	srv := p.srv
	p.srv = nil
	p.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// heal listens on the proxy's port again.
func (p *tlsProxy) heal() {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
		if err == nil {
			p.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("proxy port %d: %v", p.port, err)
		}
		time.Sleep(50 * time.Millisecond) // the port frees as the old listener closes; bounded by the deadline
	}
}

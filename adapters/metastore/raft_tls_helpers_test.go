package metastore

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// testCA is a throw-away certificate authority (ECDSA P-256).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key := newTestKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// nodeCert is a PEM certificate and key pair.
type nodeCert struct{ cert, key []byte }

// issue signs a node certificate for dnsNames with usages.
func (ca *testCA) issue(t *testing.T, dnsNames []string, usages ...x509.ExtKeyUsage) nodeCert {
	t.Helper()
	key := newTestKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: "narad node"}, DNSNames: dnsNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return nodeCert{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
}

// clusterCert is a certificate as the spec asks for: the cluster name,
// serverAuth and clientAuth.
func (ca *testCA) clusterCert(t *testing.T) nodeCert {
	return ca.issue(t, []string{clusterTLSName}, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tlsFiles are the three paths a node is configured with.
type tlsFiles struct{ cert, key, ca string }

// writeTLSFiles writes c and the bundle of cas into a fresh directory.
func writeTLSFiles(t *testing.T, c nodeCert, cas ...*testCA) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	var bundle []byte
	for _, ca := range cas {
		bundle = append(bundle, ca.pem...)
	}
	f := tlsFiles{cert: filepath.Join(dir, "node.crt"), key: filepath.Join(dir, "node.key"), ca: filepath.Join(dir, "ca.crt")}
	for path, b := range map[string][]byte{f.cert: c.cert, f.key: c.key, f.ca: bundle} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f tlsFiles) hostConfig(id, addr, dir string, log *zap.Logger) HostConfig {
	return HostConfig{NodeID: id, RaftAddr: addr, DataDir: dir, RTT: testRTT, Logger: log,
		TLSCertFile: f.cert, TLSKeyFile: f.key, TLSCAFile: f.ca}
}

// startTLSNode starts a node whose Raft runs over mutual TLS with f.
func startTLSNode(t *testing.T, id, addr, dir string, f tlsFiles, log *zap.Logger, cfg StoreConfig) *node {
	t.Helper()
	h, err := NewHost(f.hostConfig(id, addr, dir, log))
	if err != nil {
		t.Fatal(err)
	}
	s, err := h.OpenMetadata(cfg)
	if err != nil {
		h.Close()
		t.Fatal(err)
	}
	n := &node{id: id, addr: addr, dir: dir, host: h, store: s}
	t.Cleanup(n.stop)
	return n
}

// startTLSCluster bootstraps three nodes n1..n3, all configured with f.
func startTLSCluster(t *testing.T, f tlsFiles, cfg StoreConfig) []*node {
	t.Helper()
	cfg.InitialMembers = map[string]string{"n1": freeAddr(t), "n2": freeAddr(t), "n3": freeAddr(t)}
	nodes := make([]*node, 0, 3)
	for _, id := range []string{"n1", "n2", "n3"} {
		nodes = append(nodes, startTLSNode(t, id, cfg.InitialMembers[id], t.TempDir(), f, testLogger(), cfg))
	}
	return nodes
}

// restartTLS stops n and starts it again from its directory with f.
func restartTLS(t *testing.T, n *node, f tlsFiles, log *zap.Logger) *node {
	t.Helper()
	n.stop()
	return startTLSNode(t, n.id, n.addr, n.dir, f, log, StoreConfig{})
}

// waitCaughtUp waits until n reports caught up, as /readyz asks. It runs the
// probe's barrier itself (in short attempts) rather than wait for the
// probe's next tick.
func waitCaughtUp(t *testing.T, n *node) {
	t.Helper()
	waitFor(t, 20*time.Second, n.id+" to catch up", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*testRTT)
		defer cancel()
		_ = n.store.Barrier(ctx)
		return n.store.CaughtUp()
	})
}

// observed returns a logger that records info and above.
func observed() (*zap.Logger, *observer.ObservedLogs) {
	core, logs := observer.New(zapcore.InfoLevel)
	return zap.New(core), logs
}

// logged reports whether logs hold a line at level whose message contains
// msg.
func logged(logs *observer.ObservedLogs, level zapcore.Level, msg string) bool {
	for _, e := range logs.All() {
		if e.Level == level && strings.Contains(e.Message, msg) {
			return true
		}
	}
	return false
}

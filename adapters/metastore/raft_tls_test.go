package metastore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lni/dragonboat/v4/config"
	pb "github.com/lni/dragonboat/v4/raftpb"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Ensure that NewHost refuses TLS settings it cannot run with, before Raft
// starts, with an error naming the setting at fault.
func TestRaftTLSSettingsRefusedAtStart(t *testing.T) {
	ca := newTestCA(t, "ca")
	good := writeTLSFiles(t, ca.clusterCert(t), ca)
	otherKey := writeTLSFiles(t, ca.clusterCert(t), ca).key
	noSAN := writeTLSFiles(t, ca.issue(t, []string{"node-1.example"}, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth), ca)
	serverOnly := writeTLSFiles(t, ca.issue(t, []string{clusterTLSName}, x509.ExtKeyUsageServerAuth), ca)
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	corruptCA := filepath.Join(dir, "corrupt-ca.pem")
	if err := os.WriteFile(junk, []byte("not pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(corruptCA, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	with := func(edit func(*tlsFiles)) tlsFiles { f := good; edit(&f); return f }

	for _, tc := range []struct {
		name  string
		files tlsFiles
		want  []string
	}{
		{"only the certificate", tlsFiles{cert: good.cert}, []string{settingTLSCertFile, settingTLSKeyFile, settingTLSCAFile, "together"}},
		{"no CA file", with(func(f *tlsFiles) { f.ca = "" }), []string{"together"}},
		{"certificate missing", with(func(f *tlsFiles) { f.cert = missing }), []string{settingTLSCertFile, missing}},
		{"key missing", with(func(f *tlsFiles) { f.key = missing }), []string{settingTLSKeyFile, missing}},
		{"CA file missing", with(func(f *tlsFiles) { f.ca = missing }), []string{settingTLSCAFile, missing}},
		{"certificate not PEM", with(func(f *tlsFiles) { f.cert = junk }), []string{settingTLSCertFile, "no PEM certificate"}},
		{"key not PEM", with(func(f *tlsFiles) { f.key = junk }), []string{settingTLSKeyFile, "no PEM private key"}},
		{"key of another certificate", with(func(f *tlsFiles) { f.key = otherKey }), []string{settingTLSKeyFile, "is not the private key of", settingTLSCertFile}},
		{"CA file not PEM", with(func(f *tlsFiles) { f.ca = junk }), []string{settingTLSCAFile, "no PEM certificate"}},
		{"CA file corrupt", with(func(f *tlsFiles) { f.ca = corruptCA }), []string{settingTLSCAFile, "certificate 1"}},
		{"certificate without the cluster name", noSAN, []string{settingTLSCertFile, "DNS SAN " + clusterTLSName}},
		{"certificate without clientAuth", serverOnly, []string{settingTLSCertFile, "clientAuth"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := NewHost(tc.files.hostConfig("n1", freeAddr(t), t.TempDir(), testLogger()))
			if err == nil {
				h.Close()
				t.Fatal("NewHost accepted the settings")
			}
			if !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v does not wrap ErrBadConfig", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// Ensure that each node logs the transport it runs: plaintext without the
// files, mutual TLS with the CA file otherwise (a bundle may hold several
// CAs), and warns when its own certificate does not chain to its bundle.
func TestRaftTransportLogLine(t *testing.T) {
	oldCA, newCA := newTestCA(t, "old"), newTestCA(t, "new")
	for _, tc := range []struct {
		name   string
		files  tlsFiles
		fields map[string]any
		warn   bool
	}{
		{"plaintext", tlsFiles{}, map[string]any{"tls": "plaintext"}, false},
		{"two CAs", writeTLSFiles(t, oldCA.clusterCert(t), oldCA, newCA), map[string]any{"tls": "mutual", "cas": int64(2)}, false},
		{"foreign certificate", writeTLSFiles(t, newCA.clusterCert(t), oldCA), map[string]any{"tls": "mutual", "cas": int64(1)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, logs := observed()
			h, err := NewHost(tc.files.hostConfig("n1", freeAddr(t), t.TempDir(), log))
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
			lines := logs.FilterMessage("raft transport").All()
			if len(lines) != 1 || lines[0].Level != zapcore.InfoLevel {
				t.Fatalf("transport lines: %+v", lines)
			}
			got := lines[0].ContextMap()
			if tc.files.ca != "" {
				tc.fields["ca_file"] = tc.files.ca
			}
			for k, v := range tc.fields {
				if got[k] != v {
					t.Fatalf("field %s = %v, want %v (line %v)", k, got[k], v, got)
				}
			}
			if warned := logged(logs, zapcore.WarnLevel, "does not verify against its own CA bundle"); warned != tc.warn {
				t.Fatalf("self-check warning logged: %v, want %v", warned, tc.warn)
			}
		})
	}
}

// Ensure that the TLS transport delivers batches and snapshot chunks (small
// and beyond the kept buffer) between peers with certificates from a
// trusted CA carrying the cluster name, though they dial an IP, and that a
// certificate from another CA or without the cluster name is refused on
// either side, logged as a bad certificate.
func TestRaftTLSTransportChecksPeers(t *testing.T) {
	ca, other := newTestCA(t, "cluster"), newTestCA(t, "other")
	good := transportTLS(t, ca.clusterCert(t), ca)
	noSAN := transportTLS(t, ca.issue(t, []string{"node-1.example"}, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth), ca)
	foreign := transportTLS(t, other.clusterCert(t), ca)

	t.Run("trusted", func(t *testing.T) {
		srv, got := startTestTransport(t, good)
		cli, _ := newTestTransport(t, good)
		conn, err := cli.GetConnection(context.Background(), srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		big := bytes.Repeat([]byte{7}, raftFrameBufferBytes+1)
		for _, cmd := range [][]byte{[]byte("small"), big} {
			b := pb.MessageBatch{DeploymentId: 9, SourceAddress: "127.0.0.1:1",
				Requests: []pb.Message{{Type: pb.Replicate, ShardID: 1, From: 2, To: 3, Entries: []pb.Entry{{Index: 4, Cmd: cmd}}}}}
			if err := conn.SendMessageBatch(b); err != nil {
				t.Fatal(err)
			}
			r := <-got.batches
			if r.DeploymentId != 9 || len(r.Requests) != 1 || !bytes.Equal(r.Requests[0].Entries[0].Cmd, cmd) {
				t.Fatalf("received %+v", r.Requests)
			}
		}
		snap, err := cli.GetSnapshotConnection(context.Background(), srv.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		if err := snap.SendChunk(pb.Chunk{ShardID: 1, ReplicaID: 3, From: 2, ChunkCount: 1, Data: []byte("state")}); err != nil {
			t.Fatal(err)
		}
		if c := <-got.chunks; c.From != 2 || string(c.Data) != "state" {
			t.Fatalf("received chunk %+v", c)
		}
	})

	for _, tc := range []struct {
		name           string
		server, client *raftTLS
		clientErr      string
		refusing       string // which side logs that it refused the other's certificate
	}{
		{"client from another CA", good, foreign, "unknown certificate authority", "server"},
		{"server without the cluster name", noSAN, good, clusterTLSName, "client"},
		{"client without the cluster name", good, noSAN, "bad certificate", "server"},
		{"server from another CA", foreign, good, "unknown authority", "client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := startTestTransport(t, tc.server)
			cli, _ := newTestTransport(t, tc.client)
			_, err := cli.GetConnection(context.Background(), srv.addr)
			if err == nil || !strings.Contains(err.Error(), tc.clientErr) {
				t.Fatalf("dial: %v, want an error mentioning %q", err, tc.clientErr)
			}
			t.Log(err)
			refuser, refused := srv.logs, cli.logs
			if tc.refusing == "client" {
				refuser, refused = cli.logs, srv.logs
			}
			waitFor(t, 5*time.Second, "both sides to log a bad certificate", func() bool {
				return refusedBy(refuser, "peer") && refusedBy(refused, "self")
			})
		})
	}
}

// refusedBy reports whether logs hold a bad-certificate error whose
// "refused" field is whose.
func refusedBy(logs *observer.ObservedLogs, whose string) bool {
	for _, e := range logs.FilterMessage("raft peer handshake failed: bad certificate").All() {
		if e.Level == zapcore.ErrorLevel && e.ContextMap()["refused"] == whose {
			return true
		}
	}
	return false
}

// transportTLS builds TLS material without loadRaftTLS's own checks, so a
// peer can present what a misconfigured or foreign node would.
func transportTLS(t *testing.T, c nodeCert, cas ...*testCA) *raftTLS {
	t.Helper()
	cert, err := tls.X509KeyPair(c.cert, c.key)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	for _, ca := range cas {
		roots.AddCert(ca.cert)
	}
	return &raftTLS{cert: cert, roots: roots, caCount: len(cas)}
}

type testTransport struct {
	*tlsTransport
	addr string
	logs *observer.ObservedLogs
}

type received struct {
	batches chan pb.MessageBatch
	chunks  chan pb.Chunk
}

// newTestTransport creates an unstarted transport (enough to dial); got
// receives what it is sent once started.
func newTestTransport(t *testing.T, r *raftTLS) (*testTransport, received) {
	t.Helper()
	core, logs := observer.New(zapcore.InfoLevel)
	got := received{batches: make(chan pb.MessageBatch, 4), chunks: make(chan pb.Chunk, 4)}
	f := &tlsTransportFactory{server: r.serverConfig(), client: r.clientConfig(), log: zap.New(core)}
	addr := freeAddr(t)
	tr := f.Create(config.NodeHostConfig{RaftAddress: addr},
		func(b pb.MessageBatch) { got.batches <- b },
		func(c pb.Chunk) bool { got.chunks <- c; return true })
	tt := &testTransport{tlsTransport: tr.(*tlsTransport), addr: addr, logs: logs}
	t.Cleanup(func() { _ = tt.Close() })
	return tt, got
}

// startTestTransport starts a listening transport.
func startTestTransport(t *testing.T, r *raftTLS) (*testTransport, received) {
	t.Helper()
	tt, got := newTestTransport(t, r)
	if err := tt.Start(); err != nil {
		t.Fatal(err)
	}
	return tt, got
}

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startSecuredCluster runs n secured `narad serve` processes on loopback,
// root seeded from NARAD_ADMIN_PASSWORD and Raft over mutual TLS (one
// certificate for every node, from a CA made for the test), and waits until
// root signs in on every one.
func startSecuredCluster(t *testing.T, n int) []*node {
	t.Helper()
	cert, key, ca := writeClusterTLS(t)
	// Later entries of a process environment win (os/exec keeps the last
	// value of a key), so these turn the loopback cluster's security on.
	nodes := startClusterWith(t, n, []string{
		"NARAD_SECURITY_ENABLED=true",
		"NARAD_CLUSTER_TLS_CERT_FILE=" + cert,
		"NARAD_CLUSTER_TLS_KEY_FILE=" + key,
		"NARAD_CLUSTER_TLS_CA_FILE=" + ca,
		"NARAD_ADMIN_PASSWORD=" + rootPassword,
		"NARAD_LOG_LEVEL=info",
	})
	for _, nd := range nodes {
		waitSignIn(t, nd.url, "admin", rootPassword)
		if !strings.Contains(nd.logs.String(), `"tls":"mutual"`) {
			t.Fatalf("node %s does not say it runs Raft over mutual TLS", nd.url)
		}
	}
	return nodes
}

// writeClusterTLS makes a CA and one node certificate as internals §12.3
// asks (DNS name narad-cluster.local, server and client auth), ECDSA P-256,
// and returns the PEM files' paths.
func writeClusterTLS(t *testing.T) (certFile, keyFile, caFile string) {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, nodeKey := newKey(), newKey()
	valid := func(tmpl *x509.Certificate) *x509.Certificate {
		tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
		return tmpl
	}
	caTmpl := valid(&x509.Certificate{Subject: pkix.Name{CommonName: "e2e cluster CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature})
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	nodeTmpl := valid(&x509.Certificate{Subject: pkix.Name{CommonName: "narad node"}, DNSNames: []string{"narad-cluster.local"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
	nodeDER, err := x509.CreateCertificate(rand.Reader, nodeTmpl, caCert, &nodeKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(nodeKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("node.pem", "CERTIFICATE", nodeDER), write("node-key.pem", "PRIVATE KEY", keyDER), write("ca.pem", "CERTIFICATE", caDER)
}

// follower returns a node that does not lead the metadata shard.
func follower(t *testing.T, nodes []*node) *node {
	t.Helper()
	var got struct {
		Members []struct {
			ID     string `json:"id"`
			Leader bool   `json:"leader"`
		} `json:"members"`
	}
	a := call(t, nodes[0].url, "admin", rootPassword, "GET", "/v1/cluster/members", "")
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &got) != nil {
		t.Fatalf("members: %d %s", a.status, a.body)
	}
	for _, m := range got.Members {
		if !m.Leader {
			var i int
			fmt.Sscanf(m.ID, "n%d", &i)
			return nodes[i-1]
		}
	}
	t.Fatal("no follower")
	return nil
}

// ensure that on three secured nodes (Raft over mutual TLS) a caller keeps
// its identity through a node that forwards its write: a topic created on a
// follower is owned by the caller everywhere and the replicated history
// names the caller; and that a password change made on one node turns the
// old password away on another that had it cached.
func TestIdentityKeptAcrossNodes(t *testing.T) {
	nodes := startSecuredCluster(t, 3)
	call(t, nodes[0].url, "admin", rootPassword, "POST", "/v1/users",
		`{"username":"kim","password":"kim-pw","grants":[{"action":"create","patterns":["kim-*"]}]}`).want(t, "create kim", 201, "")
	for _, n := range nodes {
		waitSignIn(t, n.url, "kim", "kim-pw")
	}
	f := follower(t, nodes)
	call(t, f.url, "kim", "kim-pw", "POST", "/v1/topics", `{"name":"kim-1"}`).want(t, "kim creates on a follower", 201, "")
	for _, n := range nodes {
		deadline := time.Now().Add(10 * time.Second)
		for {
			a := call(t, n.url, "admin", rootPassword, "GET", "/v1/topics/kim-1", "")
			if a.status == http.StatusOK && strings.Contains(a.body, `"owner":"kim"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %s: topic kim-1 %d %s, want owner kim", n.url, a.status, a.body)
			}
			time.Sleep(50 * time.Millisecond) // polling replication, bounded by the deadline
		}
		ev := call(t, n.url, "admin", rootPassword, "GET", "/v1/cluster/events?limit=1000", "")
		if !strings.Contains(ev.body, `"actor":"kim","type":"CreateTopicWith","subject":"topic kim-1"`) {
			t.Fatalf("node %s history does not name kim: %s", n.url, tail(ev.body, 2000))
		}
	}
	call(t, nodes[1].url, "kim", "kim-pw", "GET", "/v1/topics", "").want(t, "kim cached on n2", 200, "")
	call(t, nodes[0].url, "admin", rootPassword, "PUT", "/v1/users/kim/password", `{"new_password":"kim-2"}`).want(t, "root resets kim", 204, "")
	deadline := time.Now().Add(10 * time.Second)
	for call(t, nodes[1].url, "kim", "kim-pw", "GET", "/v1/topics", "").status != http.StatusUnauthorized {
		if time.Now().After(deadline) {
			t.Fatal("n2 still takes kim's old password")
		}
		time.Sleep(50 * time.Millisecond) // polling replication, bounded by the deadline
	}
	call(t, nodes[1].url, "kim", "kim-2", "GET", "/v1/topics", "").want(t, "kim's new password on n2", 200, "")
}

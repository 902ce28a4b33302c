package openapi

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is the server module's root, relative to this package.
const repoRoot = "../.."

// The secured node's root account (seeded from NARAD_ADMIN_PASSWORD).
const (
	rootUser     = "admin"
	rootPassword = "openapi-root-password"
)

// nodeReadyTimeout bounds the build-free part of a start: Raft election,
// root seeding and the first sign-in.
const nodeReadyTimeout = 60 * time.Second

// node is one narad process on loopback, with security on.
type node struct {
	url  string
	logs *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// buildNarad compiles cmd/narad from the repository root into a temporary
// directory and returns the binary's path.
func buildNarad(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "narad")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/narad")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/narad in %s: %v\n%s", root, err, out)
	}
	return bin
}

// startNode builds and starts a single secured node on free loopback ports
// with a temporary data directory and the extra NAME=value settings env,
// and waits until root can sign in. The process is killed when the test
// ends, pass or fail.
func startNode(t *testing.T, env ...string) *node {
	t.Helper()
	bin := buildNarad(t)
	port := freePort(t)
	n := &node{url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &lockedBuffer{}, done: make(chan struct{})}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(environWithoutNarad(),
		"NARAD_NODE_ID=openapi1",
		fmt.Sprintf("NARAD_HTTP_ADDR=127.0.0.1:%d", port),
		fmt.Sprintf("NARAD_CLUSTER_ADDR=127.0.0.1:%d", port+1),
		"NARAD_DATA_DIR="+t.TempDir(),
		"NARAD_ADMIN_PASSWORD="+rootPassword,
		"NARAD_SECURITY_ENABLED=true",
		"NARAD_LOG_LEVEL=warn",
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = n.logs, n.logs
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(n.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-n.done
		if t.Failed() {
			logs := n.logs.String()
			t.Logf("node log (last 4000 bytes):\n%s", logs[max(0, len(logs)-4000):])
		}
	})
	n.waitReady(t)
	return n
}

// environWithoutNarad is the test's environment less any NARAD_* setting,
// so that the node runs with exactly the settings startNode gives it.
func environWithoutNarad() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NARAD_") {
			env = append(env, kv)
		}
	}
	return env
}

// waitReady polls /readyz, then a signed-in read, until both answer 200;
// it fails at the deadline or when the process exits first.
func (n *node) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.NewTimer(nodeReadyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	probes := []struct{ path, user string }{{"/readyz", ""}, {"/v1/topics", rootUser}}
	for _, p := range probes {
		for !n.answers200(p.path, p.user) {
			select {
			case <-n.done:
				t.Fatalf("node exited before it was ready:\n%s", n.logs.String())
			case <-deadline.C:
				t.Fatalf("GET %s not 200 within %s:\n%s", p.path, nodeReadyTimeout, n.logs.String())
			case <-tick.C:
			}
		}
	}
}

func (n *node) answers200(path, user string) bool {
	req, err := http.NewRequest(http.MethodGet, n.url+path, nil)
	if err != nil {
		return false
	}
	if user != "" {
		req.SetBasicAuth(user, rootPassword)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// freePort returns a loopback port free over TCP and UDP (the client API
// and node-to-node QUIC share the number) whose successor is free over TCP
// (Raft).
func freePort(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		ok := free("tcp", port+1) && free("udp", port)
		l.Close()
		if ok {
			return port
		}
	}
	t.Fatal("no free loopback port")
	return 0
}

func free(network string, port int) bool {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if network == "udp" {
		c, err := net.ListenPacket(network, addr)
		if err != nil {
			return false
		}
		return c.Close() == nil
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return false
	}
	return l.Close() == nil
}

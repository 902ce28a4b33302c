package e2e

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// node is one narad process on loopback.
type node struct {
	t       *testing.T
	dataDir string
	port    int
	url     string
	cmd     *exec.Cmd
	logs    *lockedBuffer
	done    chan struct{}
}

// nodeReadyTimeout bounds how long a start (incl. WAL replay and election) may take.
const nodeReadyTimeout = 60 * time.Second

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

// freePorts returns a port whose successor is free too (HTTP and Raft).
func freePorts(t *testing.T) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		a, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		a.Close()
		if err == nil {
			b.Close()
			return port
		}
	}
	t.Fatal("no free port pair")
	return 0
}

// startNode runs `narad server start --dev` on dataDir and waits until ready.
func startNode(t *testing.T, dataDir string, port int) *node {
	t.Helper()
	n := &node{t: t, dataDir: dataDir, port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &lockedBuffer{}}
	n.cmd = exec.Command(naradBin, "server", "start", "--dev", "--port", fmt.Sprint(port), "--data-dir", dataDir)
	n.cmd.Stdout, n.cmd.Stderr = n.logs, n.logs
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() { _ = n.cmd.Wait(); close(n.done) }()
	t.Cleanup(func() { n.kill9() })
	n.waitReady()
	return n
}

func (n *node) waitReady() {
	n.t.Helper()
	deadline := time.Now().Add(nodeReadyTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			n.t.Fatalf("node exited before it was ready:\n%s", n.logs.String())
		default:
		}
		resp, err := http.Get(n.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(25 * time.Millisecond) // polling another process, bounded by the deadline
	}
	n.t.Fatalf("node not ready within %s:\n%s", nodeReadyTimeout, n.logs.String())
}

// kill9 ends the process at once, as a crash would.
func (n *node) kill9() {
	if n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
}

// stop asks for a graceful shutdown and waits for it.
func (n *node) stop() {
	n.t.Helper()
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(40 * time.Second):
		n.t.Fatalf("node did not stop within 40s:\n%s", n.logs.String())
	}
	if code := n.cmd.ProcessState.ExitCode(); code != 0 {
		n.t.Fatalf("node exited %d after SIGTERM:\n%s", code, n.logs.String())
	}
}

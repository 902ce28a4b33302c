package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// node is one narad process on loopback. A node killed with kill9 can be
// started again on the same data dir, ports and settings with restart.
type node struct {
	t       *testing.T
	dataDir string
	port    int
	url     string
	args    []string // narad's arguments
	env     []string // added to the test's environment; nil = inherit it
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

// startNode runs `narad server start --dev` on dataDir and waits until ready.
func startNode(t *testing.T, dataDir string, port int) *node {
	t.Helper()
	n := &node{t: t, dataDir: dataDir, port: port, url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &lockedBuffer{},
		args: []string{"server", "start", "--dev", "--port", fmt.Sprint(port), "--data-dir", dataDir}}
	n.start()
	t.Cleanup(func() {
		n.kill9()
		n.checkRaces()
	})
	n.waitReady()
	return n
}

// raceReport is how the race detector opens a report in a node's output.
const raceReport = "WARNING: DATA RACE"

// checkRaces fails the test when the node's output holds a race report
// (only a binary built with NARAD_E2E_RACE_BINARY=1 writes them).
func (n *node) checkRaces() {
	logs := n.logs.String()
	if i := strings.Index(logs, raceReport); i >= 0 {
		n.t.Errorf("node on %d reported a data race:\n%s", n.port, logs[i:min(len(logs), i+6000)])
	}
}

// start launches the process; its output joins the node's log buffer.
func (n *node) start() {
	n.t.Helper()
	n.cmd = exec.Command(naradBin, n.args...)
	if n.env != nil {
		n.cmd.Env = append(os.Environ(), n.env...)
	}
	n.cmd.Stdout, n.cmd.Stderr = n.logs, n.logs
	dieWithTest(n.cmd)
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	done := make(chan struct{})
	n.done = done
	cmd := n.cmd
	go func() { _ = cmd.Wait(); close(done) }()
}

// restart starts a node again after kill9, on the same data dir, ports and
// settings, and waits until it is ready.
func (n *node) restart() {
	n.t.Helper()
	restartAll(n)
}

// restartAll starts every node again at once (each after kill9), then
// waits until each is ready.
func restartAll(nodes ...*node) {
	nodes[0].t.Helper()
	began := time.Now()
	for _, n := range nodes {
		select {
		case <-n.done:
		default:
			n.t.Fatalf("restart of node on %d, which is still running", n.port)
		}
		fmt.Fprintf(n.logs, "\n--- e2e: restart ---\n")
		n.start()
	}
	for _, n := range nodes {
		n.waitReady()
		took := time.Since(began)
		n.t.Logf("node on %d restarted and ready in %s", n.port, took.Round(time.Millisecond))
		if took > slowRestart {
			logs := n.logs.String()
			n.t.Logf("slow restart; its log since:\n%s", tail(logs[strings.LastIndex(logs, "--- e2e: restart ---"):], 6000))
		}
	}
}

// slowRestart is a restart slow enough to show the node's log for.
const slowRestart = 8 * time.Second

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

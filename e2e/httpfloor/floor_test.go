package httpfloor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	benchEnv = "NARAD_E2E_BENCH_HTTPFLOOR"
	childEnv = "NARAD_HTTPFLOOR_CHILD"
	// clockTicksPerSecond is USER_HZ, the unit of /proc/<pid>/stat times.
	clockTicksPerSecond = 100
	workers             = 32
	bodyBytes           = 256
)

// TestHTTPFloor is a measuring tool: it asserts nothing and logs the
// server's CPU per request at a steady 3,000 requests/s (one node's
// request rate at 1,000 msg/s with one produce, consume and ack each) and
// at saturation, the server in a child process so that the client's CPU
// is not counted, three rounds.
func TestHTTPFloor(t *testing.T) {
	if os.Getenv(benchEnv) != "1" {
		t.Skipf("a measuring tool: set %s=1 to run it", benchEnv)
	}
	for round := 1; round <= 3; round++ {
		for _, load := range []struct {
			server         string
			rate, requests int
		}{{"net/http", 3000, 15000}, {"loop", 3000, 15000}, {"net/http", 0, 40000}, {"loop", 0, 40000}} {
			addr, pid, stop := startChild(t, load.server)
			before := cpuTicks(t, pid)
			start := time.Now()
			sent := load1(t, addr, load.rate, load.requests)
			elapsed := time.Since(start)
			used := cpuTicks(t, pid) - before
			stop()
			perReq := float64(used) * 1e6 / clockTicksPerSecond / float64(sent)
			t.Logf("round %d, %s, offered %d req/s (0 = as fast as answered): %d requests in %v, server CPU %.0f µs per request",
				round, load.server, load.rate, sent, elapsed.Round(time.Millisecond), perReq)
		}
	}
}

// TestHTTPFloorChild is the measured server; it runs only as the child:
// net/http's server, or a minimal hand-written HTTP/1.1 loop (loop.go).
func TestHTTPFloorChild(t *testing.T) {
	server := os.Getenv(childEnv)
	if server == "" {
		t.Skip("the measured server of TestHTTPFloor")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if server == "loop" {
		go serveLoop(ln, http.HandlerFunc(accept))
	} else {
		srv := &http.Server{Handler: http.HandlerFunc(accept)}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes it
}

func accept(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte("{\"status\":\"accepted\"}\n"))
}

func startChild(t *testing.T, server string) (addr string, pid int, stop func()) {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHTTPFloorChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+server)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("child address: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid, func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	}
}

// load1 sends about requests POSTs from workers goroutines through
// http.DefaultClient, paced to rate requests/s in all when rate > 0, and
// returns how many it sent.
func load1(t *testing.T, addr string, rate, requests int) int {
	body := bytes.Repeat([]byte("x"), bodyBytes)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now()
			for j := 0; j < requests/workers; j++ {
				if rate > 0 {
					next = next.Add(time.Second * workers / time.Duration(rate))
					time.Sleep(time.Until(next))
				}
				resp, err := http.Post("http://"+addr+"/v1/topics/t/produce", "application/octet-stream", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	return requests / workers * workers
}

// cpuTicks is pid's user + system time in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the parenthesised command: state is field 3, utime 14, stime 15.
	fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return utime + stime
}

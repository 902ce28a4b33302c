package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// sequenceNode answers GET /v1/topics/orders/children with bodies in turn,
// repeating the last, and counts the polls.
type sequenceNode struct {
	mu     sync.Mutex
	bodies []string
	polls  int
	query  []string
}

func newSequenceNode(t *testing.T, bodies ...string) (*sequenceNode, string) {
	t.Helper()
	n := &sequenceNode{bodies: bodies}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if r.URL.Path != "/v1/topics/orders/children" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"topic not found"}`)
			return
		}
		n.query = append(n.query, r.URL.RawQuery)
		body := n.bodies[min(n.polls, len(n.bodies)-1)]
		n.polls++
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return n, srv.URL
}

func (n *sequenceNode) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.polls
}

// remoteListing is a listing with one delay child and remote child
// orders-eu in state, lag messages.
func remoteListing(state string, lag int, complete, drained bool) string {
	b := func(v bool) string {
		if v {
			return "true"
		}
		return "false"
	}
	return `{"parent":"orders","children":[{"name":"late","delay_ms":90000,"lag_messages":0,"lag_complete":true},` +
		`{"name":"orders-eu","delay_ms":0,"lag_messages":` + strconv.Itoa(lag) + `,"lag_complete":` + b(complete) +
		`,"remote":{"name":"eu","topic":"orders","from":"attach","lanes":1},"paused":false,"state":"` + state +
		`","blocked_at":null,"target_verified_at":null,"unverified":false,"last_success_at":null,"lag_seconds":12,"source_drained":` + b(drained) +
		`,"partitions":[{"partition":0,"node":"n1","start_offset":4,"next_offset":9,"high_watermark":11,"ack_frontier":7,"state":"` + state +
		`","last_success_at":"2026-12-05T01:00:00Z","blocked_at":null}]}]}`
}

// ensure that topic children lists every child with its kind, lag and
// link state, and with --partitions asks for and prints a remote child's
// partition rows (api.md §8.2).
func TestTopicChildren(t *testing.T) {
	t.Parallel()
	n, url := newSequenceNode(t, remoteListing("running", 3, false, false))
	r := runCLI(t, cliOpts{}, "topic", "children", "orders", "--partitions", "-s", url)
	if r.code != 0 || !strings.Contains(r.stdout, "late") || !strings.Contains(r.stdout, "delay 1m30s") ||
		!strings.Contains(r.stdout, ">=3") || !strings.Contains(r.stdout, "running") || !strings.Contains(r.stdout, "PARTITION") ||
		!strings.Contains(r.stdout, "2026-12-05T01:00:00Z") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"4", "9", "11", "7"} {
		if !strings.Contains(r.stdout, "  "+f+" ") {
			t.Fatalf("offset %s missing:\n%s", f, r.stdout)
		}
	}
	if len(n.query) != 1 || n.query[0] != "partitions=true" {
		t.Fatalf("query %q", n.query)
	}
}

// ensure that topic wait polls until the condition holds (exit 0), stops
// with exit 2 on a link that needs a fix, exit 1 on the timeout, and wants
// exactly one condition (api.md §8.2).
func TestTopicWait(t *testing.T) {
	t.Parallel()
	base := []string{"topic", "wait", "orders", "orders-eu", "--interval", "1ms"}
	cases := map[string]struct {
		bodies []string
		args   []string
		code   int
		stdout string
		stderr string
		polls  int // at least
	}{
		"lag_zero": {[]string{remoteListing("unavailable", 5, true, false), remoteListing("running", 0, false, false), remoteListing("running", 0, true, false)},
			[]string{"--lag-zero"}, 0, "orders-eu: lag is zero", "state unavailable", 3},
		"stable": {[]string{remoteListing("running", 0, true, false)}, []string{"--lag-zero", "--stable", "20ms"}, 0, "lag is zero", "", 2},
		"drained": {[]string{remoteListing("running", 7, true, false), remoteListing("running", 7, true, true)},
			[]string{"--source-drained"}, 0, "source drained", "", 2},
		"stalled": {[]string{remoteListing("running", 5, true, false), remoteListing("rejected_record", 5, true, false)},
			[]string{"--lag-zero"}, 2, "", "stalled in state rejected_record", 2},
		"timeout":      {[]string{remoteListing("running", 5, true, false)}, []string{"--lag-zero", "--timeout", "30ms"}, 1, "", "timed out", 1},
		"no_condition": {[]string{remoteListing("running", 0, true, false)}, nil, 2, "", "exactly one of --lag-zero and --source-drained", 0},
		"both":         {[]string{remoteListing("running", 0, true, false)}, []string{"--lag-zero", "--source-drained"}, 2, "", "exactly one", 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n, url := newSequenceNode(t, tc.bodies...)
			r := runCLI(t, cliOpts{}, append(append(append([]string{}, base...), tc.args...), "-s", url)...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.stdout) || !strings.Contains(r.stderr, tc.stderr) || n.count() < tc.polls {
				t.Fatalf("exit %d after %d polls\nstdout: %s\nstderr: %s", r.code, n.count(), r.stdout, r.stderr)
			}
		})
	}
	_, url := newSequenceNode(t, remoteListing("running", 0, true, false))
	if r := runCLI(t, cliOpts{}, "topic", "wait", "orders", "late", "--source-drained", "-s", url); r.code != 2 || !strings.Contains(r.stderr, "not one") {
		t.Fatalf("a local child with --source-drained: %d %s", r.code, r.stderr)
	}
	if r := runCLI(t, cliOpts{}, "topic", "wait", "orders", "late", "--lag-zero", "-s", url); r.code != 0 {
		t.Fatalf("a local child with --lag-zero: %d %s", r.code, r.stderr)
	}
}

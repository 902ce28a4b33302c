package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

const testJobID = "00112233aabbccdd"

// jobServer serves /v1/topics/dlq/redrive: a job started runs for polls
// GETs, two letters moved on each, then ends in state with error.
type jobServer struct {
	mu     sync.Mutex
	url    string
	job    *httpclient.Redrive
	polls  int
	state  string
	error  string
	onGet  func(n int) // called on the nth GET (from 1), before the answer
	gets   int
	bodies []string // every request as "METHOD body"
}

func newJobServer(t *testing.T, polls int, state, errText string) *jobServer {
	t.Helper()
	s := &jobServer{polls: polls, state: state, error: errText}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// withJob makes the server hold j as the topic's last job.
func (s *jobServer) withJob(j httpclient.Redrive) *jobServer {
	s.job = &j
	return s
}

func (s *jobServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, r.Method+" "+string(body))
	status, v := s.answer(r.Method, body)
	hook, n := s.onGet, s.gets
	s.mu.Unlock()
	if r.Method == http.MethodGet && hook != nil {
		hook(n)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiErr(msg string) map[string]string { return map[string]string{"error": msg} }

func (s *jobServer) answer(method string, body []byte) (int, any) {
	running := s.job != nil && s.job.Running()
	switch method {
	case http.MethodPost:
		if running {
			return 409, apiErr(fmt.Sprintf("topic %q already runs redrive %s; cancel it first", "dlq", s.job.ID))
		}
		var b struct {
			To   string `json:"to"`
			Rate *int   `json:"rate_per_sec"`
			Max  int64  `json:"max_messages"`
		}
		if len(body) > 0 && json.Unmarshal(body, &b) != nil {
			return 400, apiErr("bad body")
		}
		rate := 100
		if b.Rate != nil {
			rate = *b.Rate
		}
		s.job = &httpclient.Redrive{ID: testJobID, To: b.To, RatePerSec: rate, MaxMessages: b.Max, State: httpclient.RedriveRunning,
			StartedBy: "ops", StartedAtMs: 1783615560000, UpdatedAtMs: 1783615560000}
		return 202, s.job
	case http.MethodGet:
		if s.job == nil {
			return 404, apiErr("no redrive job on this topic")
		}
		s.gets++
		if running {
			s.job.Moved += 2
			s.job.UpdatedAtMs += 5000
			if s.gets >= s.polls {
				s.job.State, s.job.Error = s.state, s.error
			}
		}
		return 200, s.job
	case http.MethodDelete:
		if !running {
			return 409, apiErr(fmt.Sprintf("topic %q runs no redrive job", "dlq"))
		}
		s.job.State = httpclient.RedriveCancelled
		return 200, s.job
	}
	return 405, apiErr("method not allowed")
}

func (s *jobServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// ensure that --job starts the job with the flags given (the rate only
// when set), prints its progress on standard error while it runs and its
// outcome on standard output, exiting 0 when it is done or cancelled.
func TestRedriveJobFollowsToTheEnd(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args                []string
		tty                 bool
		state, err          string
		body, started, out  string
		progress1, progress string
	}{
		"defaults": {
			state: httpclient.RedriveDone, body: "POST {}",
			started:  "started redrive 00112233aabbccdd on dlq (to their origins), 100/s\n",
			out:      "redrive 00112233aabbccdd of dlq done: moved 6, skipped 0\n",
			progress: "redrive 00112233aabbccdd: moved 2, skipped 0\nredrive 00112233aabbccdd: moved 4, skipped 0\n",
		},
		"to_unlimited_max": {
			args: []string{"--to", "other", "--rate", "0", "--max", "10"}, state: httpclient.RedriveDone,
			body:    `POST {"to":"other","rate_per_sec":0,"max_messages":10}`,
			started: "started redrive 00112233aabbccdd on dlq (to other), unlimited rate\n",
			out:     "redrive 00112233aabbccdd of dlq done: moved 6, skipped 0\n",
		},
		"cancelled_elsewhere_with_error": {
			args: []string{"--rate", "250"}, state: httpclient.RedriveCancelled, err: "produce to gone: http 404: topic not found",
			body:    `POST {"rate_per_sec":250}`,
			started: "started redrive 00112233aabbccdd on dlq (to their origins), 250/s\n",
			out:     "redrive 00112233aabbccdd of dlq cancelled: moved 6, skipped 0\nlast error: produce to gone: http 404: topic not found\n",
		},
		"terminal": {
			tty: true, state: httpclient.RedriveDone, body: "POST {}",
			started:  "started redrive 00112233aabbccdd on dlq (to their origins), 100/s\n",
			out:      "redrive 00112233aabbccdd of dlq done: moved 6, skipped 0\n",
			progress: fmt.Sprintf("\r%-60s\r%-60s\n", "redrive 00112233aabbccdd: moved 2, skipped 0", "redrive 00112233aabbccdd: moved 4, skipped 0"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newJobServer(t, 3, tc.state, tc.err)
			r := runCLI(t, cliOpts{progress: time.Millisecond, tty: tc.tty}, append([]string{"redrive", "dlq", "--job", "-s", s.url}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.out || !strings.HasPrefix(r.stderr, tc.started) {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if tc.progress != "" && r.stderr != tc.started+tc.progress {
				t.Fatalf("stderr %q, want %q", r.stderr, tc.started+tc.progress)
			}
			if got := s.requests(); len(got) != 4 || got[0] != tc.body {
				t.Fatalf("requests %q, want %s then 3 GETs", got, tc.body)
			}
		})
	}
}

// ensure that a failed job prints its outcome and last error and exits 1
// naming the error.
func TestRedriveJobFailed(t *testing.T) {
	t.Parallel()
	s := newJobServer(t, 2, httpclient.RedriveFailed, "produce to orders: http 403: forbidden")
	r := runCLI(t, cliOpts{progress: time.Millisecond}, "redrive", "dlq", "--job", "-s", s.url)
	if r.code != 1 || r.stdout != "redrive 00112233aabbccdd of dlq failed: moved 4, skipped 0\nlast error: produce to orders: http 403: forbidden\n" ||
		!strings.HasSuffix(r.stderr, "narad: redrive 00112233aabbccdd of dlq failed: produce to orders: http 403: forbidden\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// ensure that an interrupt while following leaves the job running, says
// so and exits 0.
func TestRedriveJobInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := newJobServer(t, 100, httpclient.RedriveDone, "")
	s.onGet = func(n int) {
		if n == 2 {
			cancel()
		}
	}
	r := runCLI(t, cliOpts{ctx: ctx, progress: time.Millisecond}, "redrive", "dlq", "--job", "-s", s.url)
	if r.code != 0 || r.stdout != "" ||
		!strings.HasSuffix(r.stderr, "narad: the job goes on on the server; narad redrive dlq --status shows it, --cancel stops it\n") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, q := range s.requests() {
		if strings.HasPrefix(q, http.MethodDelete) {
			t.Fatalf("the interrupt cancelled the job: %q", s.requests())
		}
	}
}

// ensure that --detach prints the job's id (or the job as JSON) and
// returns without reading the job again.
func TestRedriveJobDetach(t *testing.T) {
	t.Parallel()
	s := newJobServer(t, 3, httpclient.RedriveDone, "")
	r := runCLI(t, cliOpts{progress: time.Millisecond}, "redrive", "dlq", "--job", "--detach", "--to", "other", "-s", s.url)
	if r.code != 0 || r.stdout != "started redrive 00112233aabbccdd on dlq\n" || r.stderr != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	s = newJobServer(t, 3, httpclient.RedriveDone, "")
	r = runCLI(t, cliOpts{progress: time.Millisecond}, "redrive", "dlq", "--job", "--detach", "--json", "-s", s.url)
	var j httpclient.Redrive
	if err := json.Unmarshal([]byte(r.stdout), &j); r.code != 0 || err != nil || j.ID != testJobID || !j.Running() || j.RatePerSec != 100 {
		t.Fatalf("exit %d stdout %q: %v", r.code, r.stdout, err)
	}
	if got := s.requests(); len(got) != 1 {
		t.Fatalf("requests %q, want the start alone", got)
	}
}

// ensure that --status prints the job as key: value lines, the times in
// RFC 3339, or as JSON, and that a topic without a job is an error.
func TestRedriveJobStatus(t *testing.T) {
	t.Parallel()
	j := httpclient.Redrive{ID: testJobID, RatePerSec: 0, MaxMessages: 500, State: httpclient.RedriveFailed, Moved: 12, Skipped: 3, Runs: 2,
		Error: "produce to orders: http 403: forbidden", StartedBy: "ops", StartedAtMs: 1783615560000, UpdatedAtMs: 1783615565000}
	s := newJobServer(t, 0, "", "").withJob(j)
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--status", "-s", s.url)
	want := "" +
		"id:            00112233aabbccdd\n" +
		"state:         failed\n" +
		"to:            their origins\n" +
		"rate_per_sec:  unlimited\n" +
		"max_messages:  500\n" +
		"moved:         12\n" +
		"skipped:       3\n" +
		"runs:          2\n" +
		"error:         produce to orders: http 403: forbidden\n" +
		"started_by:    ops\n" +
		"started_at:    2026-07-09T16:46:00Z\n" +
		"updated_at:    2026-07-09T16:46:05Z\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("exit %d stdout\n%s\nwant\n%s\nstderr %q", r.code, r.stdout, want, r.stderr)
	}
	r = runCLI(t, cliOpts{}, "redrive", "dlq", "--status", "--json", "-s", s.url)
	var got httpclient.Redrive
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || got != j {
		t.Fatalf("exit %d stdout %q: %v", r.code, r.stdout, err)
	}
	r = runCLI(t, cliOpts{}, "redrive", "dlq", "--status", "-s", newJobServer(t, 0, "", "").url)
	if r.code != 1 || r.stderr != "narad: redrive status of dlq: http 404: no redrive job on this topic\n" {
		t.Fatalf("no job: exit %d stderr %q", r.code, r.stderr)
	}
}

// ensure that --cancel prints the cancelled job's counts, and that a
// second cancel surfaces the server's 409.
func TestRedriveJobCancel(t *testing.T) {
	t.Parallel()
	s := newJobServer(t, 0, "", "").withJob(httpclient.Redrive{ID: testJobID, RatePerSec: 100, State: httpclient.RedriveRunning, Moved: 4, Skipped: 1})
	r := runCLI(t, cliOpts{}, "redrive", "dlq", "--cancel", "-s", s.url)
	if r.code != 0 || r.stdout != "cancelled redrive 00112233aabbccdd of dlq: moved 4, skipped 1\n" || r.stderr != "" {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, cliOpts{}, "redrive", "dlq", "--cancel", "-s", s.url)
	if r.code != 1 || r.stdout != "" || r.stderr != "narad: cancel redrive of dlq: http 409: topic \"dlq\" runs no redrive job\n" {
		t.Fatalf("second cancel: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// ensure that starting a job while one runs surfaces the server's 409
// with the way out, and exits 1.
func TestRedriveJobConflict(t *testing.T) {
	t.Parallel()
	s := newJobServer(t, 0, "", "").withJob(httpclient.Redrive{ID: testJobID, State: httpclient.RedriveRunning})
	r := runCLI(t, cliOpts{progress: time.Millisecond}, "redrive", "dlq", "--job", "-s", s.url)
	want := "narad: start redrive on dlq: http 409: topic \"dlq\" already runs redrive 00112233aabbccdd; cancel it first " +
		"(narad redrive dlq --status shows it, --cancel stops it)\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// ensure that flags that do not go together are usage errors that send
// nothing.
func TestRedriveJobUsageErrors(t *testing.T) {
	t.Parallel()
	s := newJobServer(t, 0, "", "")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"job_and_status":     {args: []string{"--job", "--status"}, want: "--job, --status and --cancel are mutually exclusive"},
		"status_and_cancel":  {args: []string{"--status", "--cancel"}, want: "--job, --status and --cancel are mutually exclusive"},
		"job_and_cancel":     {args: []string{"--job", "--cancel"}, want: "--job, --status and --cancel are mutually exclusive"},
		"detach_alone":       {args: []string{"--detach"}, want: "--detach needs --job"},
		"detach_with_status": {args: []string{"--status", "--detach"}, want: "--detach needs --job"},
		"wait_with_job":      {args: []string{"--job", "--wait", "1s"}, want: "--wait is for the client-side run only, not with --job"},
		"wait_with_status":   {args: []string{"--status", "--wait", "2s"}, want: "--wait is for the client-side run only, not with --status"},
		"wait_with_cancel":   {args: []string{"--cancel", "--wait", "0"}, want: "--wait is for the client-side run only, not with --cancel"},
		"to_with_status":     {args: []string{"--status", "--to", "other"}, want: "--to is refused with --status"},
		"rate_with_cancel":   {args: []string{"--cancel", "--rate", "100"}, want: "--rate is refused with --cancel"},
		"max_with_status":    {args: []string{"--status", "--max", "5"}, want: "--max is refused with --status"},
		"json_when_running":  {args: []string{"--json"}, want: "--json needs --status, --cancel or --job --detach"},
		"json_when_follow":   {args: []string{"--job", "--json"}, want: "--json needs --status, --cancel or --job --detach"},
		"job_to_itself":      {args: []string{"--job", "--to", "dlq"}, want: "--to names the dead-letter topic itself"},
		"job_negative_rate":  {args: []string{"--job", "--rate", "-1"}, want: "--rate, --max and --wait must be >= 0"},
	} {
		r := runCLI(t, cliOpts{}, append([]string{"redrive", "dlq", "-s", s.url}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "narad: "+tc.want) {
			t.Fatalf("%s: exit %d stderr %q", name, r.code, r.stderr)
		}
	}
	if got := s.requests(); len(got) != 0 {
		t.Fatalf("usage errors sent %q", got)
	}
}

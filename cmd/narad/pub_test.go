package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ensure that pub sends the body from the argument, a file or stdin, with key and partition, and reports each acceptance.
func TestPub(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "msg.bin")
	if err := os.WriteFile(file, []byte("\x00\xffbinary"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args  []string
		stdin string
		body  string
		query string
		count int
	}{
		"argument":           {args: []string{"hello world"}, body: "hello world", count: 1},
		"file":               {args: []string{"-f", file}, body: "\x00\xffbinary", count: 1},
		"stdin":              {stdin: `{"a":1}`, body: `{"a":1}`, count: 1},
		"stdin_dash":         {args: []string{"-f", "-"}, stdin: "line\n", body: "line\n", count: 1},
		"key_and_partition":  {args: []string{"x", "-k", "customer 42", "--partition", "2"}, body: "x", query: "?key=customer+42&partition=2", count: 1},
		"count_and_rate":     {args: []string{"x", "--count", "3", "--rate", "100000"}, body: "x", count: 3},
		"delay":              {args: []string{"x", "--delay", "90s"}, body: "x", query: "?delay_ms=90000", count: 1},
		"deliver_at":         {args: []string{"x", "--deliver-at", "2026-12-24T18:00:00Z"}, body: "x", query: "?deliver_at_ms=1798135200000", count: 1},
		"password_then_body": {args: []string{"-u", "u", "--password-stdin"}, stdin: "pw\nthe body", body: "the body", count: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 3)
			r := runCLI(t, cliOpts{stdin: tc.stdin}, append([]string{"pub", "t", "-s", b.url()}, tc.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			reqs := b.requests()
			if len(reqs) != tc.count {
				t.Fatalf("%d requests, want %d", len(reqs), tc.count)
			}
			for _, req := range reqs {
				if req.line != "POST /v1/topics/t/produce"+tc.query || req.body != tc.body {
					t.Fatalf("request %q body %q", req.line, req.body)
				}
				if req.header.Get("X-Narad-Client") != "narad-cli/dev" || req.header.Get("User-Agent") != "narad-cli/dev" {
					t.Fatalf("client headers %v", req.header)
				}
			}
			want := strings.Repeat("accepted ("+strconv.Itoa(len(tc.body))+" bytes)\n", tc.count)
			if r.stderr != want {
				t.Fatalf("stderr %q, want %q", r.stderr, want)
			}
		})
	}
}

// ensure that pub refuses bad input before sending and reports server refusals.
func TestPubRefusals(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3)
	cases := map[string]struct {
		args  []string
		stdin string
		code  int
		msg   string
	}{
		"empty_body":         {args: []string{"t"}, code: 1, msg: "message required"},
		"arg_and_file":       {args: []string{"t", "x", "-f", "y"}, code: 2, msg: "not both"},
		"too_many_args":      {args: []string{"t", "x", "y"}, code: 2, msg: "at most one message"},
		"negative_partition": {args: []string{"t", "x", "--partition", "-1"}, code: 2, msg: "--partition must be >= 0"},
		"missing_file":       {args: []string{"t", "-f", "/nonexistent/msg"}, code: 1, msg: "no such file"},
		"unknown_topic":      {args: []string{"nope", "x"}, code: 1, msg: "http 404: topic not found"},
		"partition_range":    {args: []string{"t", "x", "--partition", "9"}, code: 1, msg: "http 400: invalid argument: partition out of range"},
		"too_large":          {args: []string{"t"}, stdin: strings.Repeat("x", maxMessageBytes+1), code: 1, msg: "message too large"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{stdin: tc.stdin}, append([]string{"pub", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

// ensure that pub refuses --delay with --deliver-at, a negative delay and a
// time that is not RFC 3339 as usage errors, sending nothing.
func TestPubScheduleUsage(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"both":     {"--delay", "1s", "--deliver-at", "2026-12-24T18:00:00Z"},
		"negative": {"--delay", "-1s"},
		"not_time": {"--deliver-at", "tomorrow"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 3)
			r := runCLI(t, cliOpts{}, append([]string{"pub", "t", "x", "-s", b.url()}, args...)...)
			if r.code != 2 || len(b.requests()) != 0 {
				t.Fatalf("exit %d with %d requests: %s", r.code, len(b.requests()), r.stderr)
			}
		})
	}
}

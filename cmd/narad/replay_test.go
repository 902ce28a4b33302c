package main

import (
	"strings"
	"testing"
)

// ensure that replay reads [from, to) with defaults from describe, skips aged-out offsets and ends with the summary line.
func TestReplay(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args    []string
		oldest  int64
		stdout  string
		stderr  string
		replays int
	}{
		"whole_partition": {stdout: "[p0 @0] 2026-07-09T16:46:00Z m0\n[p0 @1] 2026-07-09T16:46:00Z m1\n[p0 @2] 2026-07-09T16:46:00Z m2\n", stderr: "3 message(s) replayed from p0 [0, 3)\n", replays: 3},
		"from_oldest":     {oldest: 1, stdout: "[p0 @1] 2026-07-09T16:46:00Z m1\n[p0 @2] 2026-07-09T16:46:00Z m2\n", stderr: "2 message(s) replayed from p0 [1, 3)\n", replays: 2},
		"skips_aged_out":  {args: []string{"--from", "0"}, oldest: 2, stdout: "[p0 @2] 2026-07-09T16:46:00Z m2\n", stderr: "1 message(s) replayed from p0 [0, 3)\n2 offset(s) skipped: aged out of retention or unreadable\n", replays: 3},
		"explicit_to":     {args: []string{"--to", "2", "--raw"}, stdout: "m0\nm1\n", stderr: "2 message(s) replayed from p0 [0, 2)\n", replays: 2},
		"to_past_the_end": {args: []string{"--from", "1", "--to", "10", "--raw"}, stdout: "m1\nm2\n", stderr: "2 message(s) replayed from p0 [1, 10)\n", replays: 3},
		"empty_range":     {args: []string{"--from", "3"}, stderr: "0 message(s) replayed from p0 [3, 3)\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 3, []string{"m0", "m1", "m2"}).parts[0].oldest = tc.oldest
			r := runCLI(t, cliOpts{}, append([]string{"replay", "t", "--partition", "0", "-s", b.url()}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.stdout || r.stderr != tc.stderr {
				t.Fatalf("exit %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", r.code, r.stdout, tc.stdout, r.stderr, tc.stderr)
			}
			if got := len(b.lines("GET /v1/topics/t/consume?offset=")); got != tc.replays {
				t.Fatalf("%d replay reads, want %d", got, tc.replays)
			}
		})
	}
}

// ensure that replay needs --partition and fails naming a partition whose owner is down.
func TestReplayRefusals(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3).parts[1].down = true
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"partition_required":  {args: []string{}, code: 2, msg: "replay needs --partition"},
		"owner_down":          {args: []string{"--partition", "1"}, code: 1, msg: `partition 1 of topic "t" is unavailable (owner dead)`},
		"owner_down_explicit": {args: []string{"--partition", "1", "--from", "0", "--to", "2"}, code: 1, msg: "replay p1 @0: http 503: partition owner is down; retry later"},
		"out_of_range":        {args: []string{"--partition", "5"}, code: 1, msg: "partition 5 out of range"},
		"unknown_topic":       {args: []string{"--partition", "0", "--from", "0", "--to", "1"}, code: 1, msg: "http 404: topic not found"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			topic := "t"
			if name == "unknown_topic" {
				topic = "nope"
			}
			r := runCLI(t, cliOpts{}, append([]string{"replay", topic, "-s", b.url()}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

package main

import (
	"context"
	"strings"
	"testing"
)

// subTopic makes a one-partition topic holding a plain, a keyed JSON, and a binary message.
func subTopic(t *testing.T) *fakeBroker {
	t.Helper()
	b := newFakeBroker(t)
	b.addTopic("t", 1)
	b.put("t", 0, nil, []byte("hello"))
	b.put("t", 0, []byte("customer 42"), []byte(`{"a":1}`))
	b.put("t", 0, []byte{0xc3, 0x28}, []byte{0xff, 0x00, 0x01})
	return b
}

const subWant = "[p0 @0] 2026-07-09T16:46:00Z hello\n" +
	"[p0 @1] key=\"customer 42\" 2026-07-09T16:46:00Z {\"a\":1}\n" +
	"[p0 @2] key=c328 (binary) 2026-07-09T16:46:00Z ff0001 (3 bytes)\n"

// ensure that sub prints each message in the documented line format and acks it.
func TestSubPrintsAndAcks(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args          []string
		want          string
		acked, leased int
	}{
		"queue_mode":  {args: []string{"--count", "3"}, want: subWant, acked: 3},
		"no_ack":      {args: []string{"--count", "3", "--no-ack"}, want: subWant, leased: 3},
		"raw":         {args: []string{"--count", "2", "--raw"}, want: "hello\n{\"a\":1}\n", acked: 2},
		"count_stops": {args: []string{"--count", "1"}, want: "[p0 @0] 2026-07-09T16:46:00Z hello\n", acked: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := subTopic(t)
			r := runCLI(t, cliOpts{}, append([]string{"sub", "t", "-s", b.url()}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.want {
				t.Fatalf("exit %d stdout\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, tc.want, r.stderr)
			}
			if acked, leased := b.ackedCount("t"); acked != tc.acked || leased != tc.leased {
				t.Fatalf("acked %d leased %d, want %d %d", acked, leased, tc.acked, tc.leased)
			}
		})
	}
}

// ensure that sub retries failed acks, treats a 410 after an uncertain attempt as done, and warns otherwise.
func TestSubAckRetries(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		plan   []int
		acked  int
		code   int
		stderr string
	}{
		"retries_503_until_done":       {plan: []int{503, 503}, acked: 1},
		"retry_after_502_finds_410":    {plan: []int{502}, acked: 1},
		"lease_lost_warns":             {plan: []int{410}, stderr: "lease lost"},
		"gives_up_after_many_failures": {plan: []int{503, 503, 503, 503, 503, 503, 503, 503}, stderr: "giving up after 8 attempts"},
		"permanent_refusal_fails":      {plan: []int{403}, code: 1, stderr: "ack p0 @0: http 403"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 1, []string{"m"})
			b.ackPlan = tc.plan
			r := runCLI(t, cliOpts{}, "sub", "t", "--count", "1", "-s", b.url())
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.stderr)
			}
			if tc.stderr == "" && r.stderr != "" {
				t.Fatalf("unexpected stderr %q", r.stderr)
			}
			if acked, _ := b.ackedCount("t"); acked != tc.acked {
				t.Fatalf("acked %d, want %d", acked, tc.acked)
			}
		})
	}
}

// ensure that sub passes --partition and --wait to consume and reports a clamped wait once.
func TestSubConsumeQuery(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3, nil, []string{"a", "b"})
	r := runCLI(t, cliOpts{}, "sub", "t", "--partition", "1", "--wait", "1m", "--count", "2", "-s", b.url())
	if r.code != 0 || strings.Count(r.stderr, "the server lowered --wait to 10s") != 1 {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if got := b.lines("GET /v1/topics/t/consume"); len(got) != 2 || got[0] != "GET /v1/topics/t/consume?partition=1&wait=1m0s" {
		t.Fatalf("consumes %v", got)
	}
}

// ensure that an interrupt ends a waiting sub cleanly with exit 0.
func TestSubInterruptIsClean(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3)
	ctx, cancel := context.WithCancel(t.Context())
	b.onConsume = cancel
	r := runCLI(t, cliOpts{ctx: ctx}, "sub", "t", "-s", b.url())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// ensure that --peek reads from the high watermark (or --from) by replay, leasing nothing.
func TestSubPeek(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		args []string
		want string
	}{
		"from_high_watermark": {args: []string{"--count", "1"}, want: "[p0 @2] 2026-07-09T16:46:00Z arrived\n"},
		"from_offset":         {args: []string{"--partition", "0", "--from", "0", "--count", "2"}, want: "[p0 @0] 2026-07-09T16:46:00Z old-0\n[p0 @1] 2026-07-09T16:46:00Z old-1\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := newFakeBroker(t)
			b.addTopic("t", 1, []string{"old-0", "old-1"})
			arrived := false
			b.onReplay = func(ft *fakeTopic, p int, off int64) {
				if off == 2 && !arrived { // a message lands while peek waits at the end
					arrived = true
					part := ft.parts[p]
					part.records = append(part.records, part.records[0])
					part.records[2].Offset, part.records[2].Payload = 2, []byte("arrived")
				}
			}
			r := runCLI(t, cliOpts{}, append([]string{"sub", "t", "--peek", "-s", b.url()}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.want {
				t.Fatalf("exit %d stdout %q want %q: %s", r.code, r.stdout, tc.want, r.stderr)
			}
			if acked, leased := b.ackedCount("t"); acked+leased != 0 || len(b.lines("POST")) != 0 {
				t.Fatal("peek leased or acked")
			}
		})
	}
}

// ensure that peek refuses partitions whose owner is down and --from without --peek and --partition.
func TestSubPeekRefusals(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3).parts[1].down = true
	cases := map[string]struct {
		args []string
		code int
		msg  string
	}{
		"owner_down":        {args: []string{"--peek"}, code: 1, msg: "partition owner unavailable for p1 (owner dead)"},
		"pinned_owner_down": {args: []string{"--peek", "--partition", "1"}, code: 1, msg: "p1 (owner dead)"},
		"out_of_range":      {args: []string{"--peek", "--partition", "7"}, code: 1, msg: "partition 7 out of range"},
		"from_without_peek": {args: []string{"--from", "3", "--partition", "0"}, code: 2, msg: "--from needs --peek and --partition"},
		"from_without_pin":  {args: []string{"--peek", "--from", "3"}, code: 2, msg: "--from needs --peek and --partition"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{}, append([]string{"sub", "t", "-s", b.url()}, tc.args...)...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.msg) {
				t.Fatalf("exit %d stderr %q, want %d %q", r.code, r.stderr, tc.code, tc.msg)
			}
		})
	}
}

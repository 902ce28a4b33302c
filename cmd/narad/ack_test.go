package main

import (
	"bufio"
	"strings"
	"testing"
)

// leaseAll consumes every message of b's topic t without acking and returns
// what sub --json printed: one envelope per line, each with its handle.
func leaseAll(t *testing.T, b *fakeBroker, n string) string {
	t.Helper()
	r := runCLI(t, cliOpts{}, "sub", "t", "-s", b.url(), "--count", n, "--no-ack", "--json")
	if r.code != 0 {
		t.Fatalf("sub: exit %d %s", r.code, r.stderr)
	}
	return r.stdout
}

// ensure that ack reads handles from sub --json envelopes on standard
// input, nacks them with the delay in one batch, and sums up.
func TestAckNacksEnvelopesFromStandardInputWithADelay(t *testing.T) {
	t.Parallel()
	b := subTopic(t)
	lines := leaseAll(t, b, "3")
	r := runCLI(t, cliOpts{stdin: lines}, "ack", "t", "-s", b.url(), "--nack", "--delay", "1m30s")
	if r.code != 0 || r.stderr != "nack: 3 of 3 handle(s), redelivered no sooner than 1m30s from now\n" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	got := b.lines("POST /v1/topics/t/ack")
	if len(got) != 1 || !strings.Contains(got[0], "delay_ms=90000") || !strings.Contains(got[0], "extend=0") {
		t.Fatalf("requests %v", got)
	}
	if acked, leased := b.ackedCount("t"); acked != 0 || leased != 0 {
		t.Fatalf("acked %d leased %d after the nack", acked, leased)
	}
}

// ensure that --reason goes with the nack, single and batch, escaped, and
// with --delay.
func TestAckNackCarriesAReason(t *testing.T) {
	t.Parallel()
	b := subTopic(t)
	handles := readHandlesFrom(t, leaseAll(t, b, "3"))
	r := runCLI(t, cliOpts{}, "ack", "t", "-s", b.url(), "--handle", handles[0], "--nack", "--reason", "bad & worse")
	if r.code != 0 || r.stderr != "nack: 1 of 1 handle(s)\n" {
		t.Fatalf("single: exit %d stderr %q", r.code, r.stderr)
	}
	r = runCLI(t, cliOpts{stdin: strings.Join(handles[1:], "\n")}, "ack", "t", "-s", b.url(), "--nack", "--delay", "2s", "--reason", "later")
	if r.code != 0 {
		t.Fatalf("batch: exit %d stderr %q", r.code, r.stderr)
	}
	got := b.lines("POST /v1/topics/t/ack")
	if len(got) != 2 || !strings.Contains(got[0], "reason=bad+%26+worse") || !strings.Contains(got[0], "extend=0") ||
		!strings.Contains(got[1], "reason=later") || !strings.Contains(got[1], "delay_ms=2000") {
		t.Fatalf("requests %v", got)
	}
}

// ensure that one --handle goes in the single form, that a refused handle
// is reported and exits 1, and that acks are the default.
func TestAckSingleHandleAndRefusals(t *testing.T) {
	t.Parallel()
	b := subTopic(t)
	lines := strings.Split(strings.TrimSpace(leaseAll(t, b, "2")), "\n")
	handles := readHandlesFrom(t, strings.Join(lines, "\n"))
	r := runCLI(t, cliOpts{}, "ack", "t", "-s", b.url(), "--handle", handles[0])
	if r.code != 0 || r.stderr != "ack: 1 of 1 handle(s)\n" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if got := b.lines("POST /v1/topics/t/ack?"); len(got) != 1 || !strings.Contains(got[0], "receipt_handle=") {
		t.Fatalf("requests %v", got)
	}
	r = runCLI(t, cliOpts{}, "ack", "t", "-s", b.url(), "--handle", handles[0], "--handle", handles[1], "--extend")
	if r.code != 1 || !strings.Contains(r.stderr, "narad: "+handles[0]+": http 410: receipt handle no longer matches") ||
		!strings.Contains(r.stderr, "extend: 1 of 2 handle(s)\n") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

// ensure that bad flag combinations and input are usage errors (exit 2)
// that send nothing.
func TestAckUsageErrors(t *testing.T) {
	t.Parallel()
	b := subTopic(t)
	for name, tc := range map[string]struct {
		args  []string
		stdin string
		want  string
	}{
		"both_ops":       {args: []string{"--handle", "0:0:1", "--extend", "--nack"}, want: "--extend and --nack are mutually exclusive"},
		"delay_no_nack":  {args: []string{"--handle", "0:0:1", "--delay", "1s"}, want: "--delay needs --nack"},
		"negative_delay": {args: []string{"--handle", "0:0:1", "--nack", "--delay", "-1s"}, want: "--delay must be >= 0"},
		"reason_no_nack": {args: []string{"--handle", "0:0:1", "--reason", "x"}, want: "--reason needs --nack"},
		"reason_extend":  {args: []string{"--handle", "0:0:1", "--extend", "--reason", "x"}, want: "--reason needs --nack"},
		"empty_reason":   {args: []string{"--handle", "0:0:1", "--nack", "--reason", ""}, want: "--reason must be 1 to 1024 bytes of UTF-8"},
		"long_reason":    {args: []string{"--handle", "0:0:1", "--nack", "--reason", strings.Repeat("x", 1025)}, want: "--reason must be 1 to 1024 bytes of UTF-8"},
		"no_handles":     {stdin: "\n\n", want: "no receipt handle"},
		"bad_json_line":  {stdin: "{\"offset\":1}\n", want: "standard input line 1: a JSON line must be a message envelope with a receipt_handle"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runCLI(t, cliOpts{stdin: tc.stdin}, append([]string{"ack", "t", "-s", b.url()}, tc.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
		})
	}
	if got := b.lines("POST"); len(got) != 0 {
		t.Fatalf("usage errors sent %v", got)
	}
}

func readHandlesFrom(t *testing.T, s string) []string {
	t.Helper()
	hs, err := readHandles(bufio.NewReader(strings.NewReader(s)))
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

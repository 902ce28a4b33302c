package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// parseLines decodes each line of out as a JSON object.
func parseLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var got []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		got = append(got, m)
	}
	return got
}

// ensure that sub --json prints one envelope per line: the payload as the
// server sent it (JSON, a string, or base64 with payload_encoding), the key
// as text or base64 with key_encoding, and the receipt handle (issue 17).
func TestSubJSONPrintsEnvelopes(t *testing.T) {
	t.Parallel()
	b := subTopic(t)
	r := runCLI(t, cliOpts{}, "sub", "t", "--count", "3", "--json", "-s", b.url())
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := parseLines(t, r.stdout)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(got), r.stdout)
	}
	if got[0]["payload"] != "hello" || got[0]["key"] != nil || got[0]["offset"] != 0.0 || got[0]["topic"] != "t" {
		t.Errorf("plain message: %v", got[0])
	}
	if p, ok := got[1]["payload"].(map[string]any); !ok || p["a"] != 1.0 || got[1]["key"] != "customer 42" {
		t.Errorf("keyed JSON message: %v", got[1])
	}
	wantKey, wantBody := base64.StdEncoding.EncodeToString([]byte{0xc3, 0x28}), base64.StdEncoding.EncodeToString([]byte{0xff, 0x00, 0x01})
	if got[2]["key"] != wantKey || got[2]["key_encoding"] != "base64" || got[2]["payload"] != wantBody || got[2]["payload_encoding"] != "base64" {
		t.Errorf("binary message: %v", got[2])
	}
	for _, m := range got {
		if h, _ := m["receipt_handle"].(string); h == "" {
			t.Errorf("no receipt_handle: %v", m)
		}
	}
	if acked, _ := b.ackedCount("t"); acked != 3 {
		t.Errorf("acked %d, want 3", acked)
	}
}

// ensure that replay --json prints envelopes without a receipt handle and
// keeps its summary on standard error.
func TestReplayJSON(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 1, []string{"m0", "m1"})
	r := runCLI(t, cliOpts{}, "replay", "t", "--partition", "0", "--json", "-s", b.url())
	if r.code != 0 || r.stderr != "2 message(s) replayed from p0 [0, 2)\n" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	got := parseLines(t, r.stdout)
	if len(got) != 2 || got[1]["payload"] != "m1" || got[1]["offset"] != 1.0 || got[1]["receipt_handle"] != nil {
		t.Fatalf("replay --json:\n%s", r.stdout)
	}
}

// ensure that pub --json prints a line per accepted message on standard
// output and nothing on standard error.
func TestPubJSON(t *testing.T) {
	t.Parallel()
	b := newFakeBroker(t)
	b.addTopic("t", 3)
	r := runCLI(t, cliOpts{}, "pub", "t", "hello", "-k", "k1", "--partition", "2", "--count", "2", "--json", "-s", b.url())
	want := `{"topic":"t","bytes":5,"key":"k1","partition":2}` + "\n"
	if r.code != 0 || r.stdout != want+want || r.stderr != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// ensure that --raw and --json together are a usage error.
func TestRawAndJSONExcludeEachOther(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"sub", "t"}, {"replay", "t", "--partition", "0"}} {
		r := runCLI(t, cliOpts{}, append(args, "--raw", "--json", "-s", "http://127.0.0.1:1")...)
		if r.code != 2 || !strings.Contains(r.stderr, "--raw and --json exclude each other") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
}

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// ensure that a node opted in with NARAD_QUIET_SYSMON=1 runs with the
// runtime's monitor kept out of deep sleep (cmd/narad/sysmon.go): `server
// start` re-executes itself once with schedtrace added to GODEBUG, keeping
// the operator's other settings, and prints no scheduler trace (on a host
// up for less than the trace period: past it the runtime prints one line at
// start, an accepted cost).
func TestServerRunsWithQuietSysmon(t *testing.T) {
	t.Setenv("GODEBUG", "madvdontneed=1")
	t.Setenv("NARAD_QUIET_SYSMON", "1")
	n := startNode(t, t.TempDir(), freePorts(t))
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	var godebug string
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), "GODEBUG="); ok {
			godebug = v
		}
	}
	if godebug != "madvdontneed=1,schedtrace=2147483647" {
		t.Fatalf("node GODEBUG = %q, want the operator's setting plus the quiet schedtrace", godebug)
	}
	if uptimeDays() < 24 && strings.Contains(n.logs.String(), "SCHED ") {
		t.Fatalf("node printed a scheduler trace:\n%s", tail(n.logs.String(), 2000))
	}
}

// uptimeDays is how long this host has been up, from /proc/uptime (0 when
// it cannot be read).
func uptimeDays() float64 {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return secs / 86400
}

// ensure that a node left to its defaults does not re-execute itself: its
// GODEBUG is the operator's, untouched, so a fatal error ends it cleanly.
func TestServerKeepsGODEBUGByDefault(t *testing.T) {
	t.Setenv("GODEBUG", "madvdontneed=1")
	t.Setenv("NARAD_QUIET_SYSMON", "")
	n := startNode(t, t.TempDir(), freePorts(t))
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", n.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), "GODEBUG="); ok && v != "madvdontneed=1" {
			t.Fatalf("node GODEBUG = %q, want the operator's own", v)
		}
	}
}

//go:build unix

package main

import (
	"slices"
	"testing"
)

// ensure that the bench is re-executed, a node only when NARAD_QUIET_SYSMON
// opts in, and nothing else, global flags (and their values) before them
// included.
func TestWantsQuietSysmon(t *testing.T) {
	optIn := func(k string) string {
		if k == quietSysmonEnvVar {
			return "1"
		}
		return ""
	}
	for _, args := range [][]string{{"serve"}, {"server", "start", "--dev"}} {
		if wantsQuietSysmon(args, func(string) string { return "" }) {
			t.Errorf("%q re-executed without opting in", args)
		}
		if wantsQuietSysmon(args, func(string) string { return "false" }) {
			t.Errorf("%q re-executed with NARAD_QUIET_SYSMON=false", args)
		}
	}
	if !wantsQuietSysmon([]string{"bench", "t"}, func(string) string { return "" }) {
		t.Error("bench not re-executed by default")
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"serve"}, true},
		{[]string{"serve", "--config", "x.json"}, true},
		{[]string{"server", "start", "--dev"}, true},
		{[]string{"-s", "http://h:1", "server", "start"}, true},
		{[]string{"--server=http://h:1", "serve"}, true},
		{[]string{"-s", "http://h:1", "bench", "t", "--count", "10"}, true},
		{[]string{"server", "report"}, false},
		{[]string{"topic", "add", "bench"}, false},
		{[]string{"server"}, false},
		{[]string{"topic", "add", "serve"}, false},
		{[]string{"-s", "serve", "topic", "ls"}, false},
		{[]string{"--", "serve"}, false},
		{nil, false},
	} {
		if got := wantsQuietSysmon(tc.args, optIn); got != tc.want {
			t.Errorf("wantsQuietSysmon(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// ensure that the quiet schedtrace is added to GODEBUG (kept, not
// replaced) and that an operator's own schedtrace, 0 included, is left
// alone.
func TestQuietSysmonEnv(t *testing.T) {
	quiet := "GODEBUG=schedtrace=2147483647"
	got, ok := quietSysmonEnv([]string{"A=1", "B=2"})
	if !ok || !slices.Equal(got, []string{"A=1", "B=2", quiet}) {
		t.Fatalf("no GODEBUG: got %q, %v", got, ok)
	}
	got, ok = quietSysmonEnv([]string{"GODEBUG=madvdontneed=1", "A=1"})
	if !ok || !slices.Equal(got, []string{"A=1", "GODEBUG=madvdontneed=1,schedtrace=2147483647"}) {
		t.Fatalf("other GODEBUG settings: got %q, %v", got, ok)
	}
	for _, own := range []string{"GODEBUG=schedtrace=0", "GODEBUG=gctrace=1, schedtrace=1000"} {
		in := []string{"A=1", own}
		if got, ok := quietSysmonEnv(in); ok || !slices.Equal(got, in) {
			t.Fatalf("%s: got %q, %v; want it unchanged", own, got, ok)
		}
	}
}

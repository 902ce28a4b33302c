//go:build unix

package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// schedtraceQuietMilliseconds is the longest period GODEBUG's schedtrace
// takes (an int32 of milliseconds, about 24.8 days): long enough that the
// runtime's one-line scheduler summary practically never prints.
const schedtraceQuietMilliseconds = 1<<31 - 1

// quietSysmonEnv returns env with GODEBUG extended by
// schedtrace=schedtraceQuietMilliseconds, or ok=false when GODEBUG already
// sets schedtrace (an operator's choice, schedtrace=0 included, wins).
//
// Why a server (and the bench, which behaves like one) wants it: when every processor of a Go process is idle, the
// runtime's monitor thread (sysmon) sleeps until the next system call wakes
// it, and that wake resets its polling interval to 20 µs, from which it
// backs off only after about fifty polls. A node of a cluster on a small
// machine goes idle and wakes hundreds of times a second, so the monitor
// polled almost continuously: on the 2-core development VM, where each
// thread switch is expensive, nearly half of a three-node cluster's thread
// switches were those polls. With schedtrace set the monitor never takes
// that deep sleep (the runtime keeps it awake to print the trace), so it
// settles at its longest interval, 10 ms. The README's performance section
// has the measurements: at saturation the three-node bench gained about a
// fifth; at 1,000 msg/s a node used about 12% less CPU and its produce p99
// fell from about 11 to 7 ms. The setting is read only at process start,
// hence the re-exec.
//
// A node does this only when asked (NARAD_QUIET_SYSMON=1 or true): what it
// costs below includes a way for a runtime fatal error to hang the process
// instead of ending it, and a supervised server must die cleanly. The bench
// client does it by default (GODEBUG=schedtrace=0 opts out).
//
// What it costs:
//   - the runtime prints its one-line scheduler summary ("SCHED ...") when
//     the host's monotonic clock passes a multiple of the period, so a
//     host up for more than 24.8 days gets one such line on stderr at
//     start and one every 24.8 days after;
//   - a fatal error prints the scheduler's detailed state before the
//     panic and its traces;
//   - that dump takes the scheduler's lock, so a fatal error raised inside
//     the scheduler while it holds that lock (a runtime bug, not a Go
//     panic of ours) would hang the process instead of ending it.
func quietSysmonEnv(env []string) (out []string, ok bool) {
	out = make([]string, 0, len(env)+1)
	godebug := ""
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "GODEBUG="); found {
			godebug = v
			continue
		}
		out = append(out, kv)
	}
	for _, setting := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(setting), "schedtrace=") {
			return env, false
		}
	}
	quiet := "schedtrace=" + strconv.Itoa(schedtraceQuietMilliseconds)
	if godebug != "" {
		quiet = godebug + "," + quiet
	}
	return append(out, "GODEBUG="+quiet), true
}

// quietSysmonEnvVar opts a node into the quiet monitor.
const quietSysmonEnvVar = "NARAD_QUIET_SYSMON"

// wantsQuietSysmon reports whether args (without the program name) run the
// load generator (`bench`, which idles and wakes like a node: about a tenth
// less client CPU per message with the quiet monitor), or a node (`serve`,
// `server start`) whose environment opts in (getenv(NARAD_QUIET_SYSMON) is
// 1 or true), after any global flags.
func wantsQuietSysmon(args []string, getenv func(string) string) bool {
	var words []string
	for i := 0; i < len(args) && len(words) < 2; i++ {
		a := args[i]
		switch {
		case a == "--":
			return false
		case strings.HasPrefix(a, "-"):
			if globalFlagTakesValue(a) {
				i++
			}
		default:
			words = append(words, a)
		}
	}
	if len(words) == 0 {
		return false
	}
	if words[0] == "bench" {
		return true
	}
	node := words[0] == "serve" || words[0] == "server" && len(words) > 1 && words[1] == "start"
	opted, _ := strconv.ParseBool(getenv(quietSysmonEnvVar))
	return node && opted
}

// globalFlagTakesValue reports whether flag is a global flag whose value is
// the next argument (root.go).
func globalFlagTakesValue(flag string) bool {
	switch flag {
	case "--ctx", "-p", "--password", "-s", "--server", "-u", "--user":
		return true
	}
	return false
}

// quietSysmon re-executes a node or bench command with quietSysmonEnv's GODEBUG,
// once. It returns (and the command runs as it is) when the setting is
// already there or the re-exec fails.
func quietSysmon(args []string) {
	if !wantsQuietSysmon(args, os.Getenv) {
		return
	}
	env, ok := quietSysmonEnv(os.Environ())
	if !ok {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, append([]string{os.Args[0]}, args...), env) // returns only on failure
}

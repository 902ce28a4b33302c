package remote

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runGate replays a gate script: one command per line, each followed by
// " => " and what the gate answers. Commands:
//
//	+D                       let D pass (a time.Duration)
//	admit                    ok | probe | wait D | busy D (a probe is out)
//	fail KIND JITTER [RA]    a failure of state KIND, Retry-After RA
//	success | cred | abandon
//
// After a fail, success, cred or abandon the answer is the gate's state:
// open, or closed REASON with the time until its next probe (or "probe
// due").
func runGate(t *testing.T, script string) string {
	t.Helper()
	var g Gate
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		cmd, _, _ := strings.Cut(strings.TrimSpace(line), " => ")
		f := strings.Fields(cmd)
		var res string
		switch {
		case strings.HasPrefix(f[0], "+"):
			d, err := time.ParseDuration(f[0][1:])
			if err != nil {
				t.Fatal(err)
			}
			now = now.Add(d)
			out.WriteString(cmd + "\n")
			continue
		case f[0] == "admit":
			switch ok, probe, wait := g.Admit(now); {
			case probe:
				res = "probe"
			case ok:
				res = "ok"
			case g.probing:
				res = "busy " + wait.String()
			default:
				res = "wait " + wait.String()
			}
		case f[0] == "fail":
			kind, ok := ParseState(f[1])
			jitter, err := strconv.ParseFloat(f[2], 64)
			if !ok || err != nil {
				t.Fatalf("bad line %q", line)
			}
			var ra time.Duration
			if len(f) > 3 {
				if ra, err = time.ParseDuration(f[3]); err != nil {
					t.Fatal(err)
				}
			}
			g.Failure(kind, now, ra, jitter)
		case f[0] == "success":
			g.Success()
		case f[0] == "cred":
			g.CredentialChanged()
		case f[0] == "abandon":
			g.Abandon()
		default:
			t.Fatalf("unknown command %q", line)
		}
		if res == "" {
			res = "open"
			if closed, reason := g.Closed(); closed {
				res = fmt.Sprintf("closed %s, probe in %s", reason, g.next.Sub(now))
				if !g.next.After(now) {
					res = fmt.Sprintf("closed %s, probe due", reason)
				}
			}
		}
		out.WriteString(cmd + " => " + res + "\n")
	}
	return out.String()
}

func checkGate(t *testing.T, script string) {
	t.Helper()
	want := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(script), "\n", " \x00 ")), " ")
	got := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(runGate(t, script)), "\n", " \x00 ")), " ")
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.ReplaceAll(got, " \x00 ", "\n"), strings.ReplaceAll(want, " \x00 ", "\n"))
	}
}

// ensure that three unavailable answers in a row close the gate, that the
// probe waits follow 250 ms doubling to 30 s with full jitter, and that a
// success opens it and restarts the backoff.
func TestGateBackoffSequence(t *testing.T) {
	checkGate(t, `
admit => ok
fail unavailable 0.5 => open
fail unavailable 0.5 => open
admit => ok
fail unavailable 0.5 => closed unavailable, probe in 125ms
admit => wait 125ms
+125ms
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 250ms
+250ms
admit => probe
fail unavailable 0.25 => closed unavailable, probe in 250ms
+250ms
admit => probe
fail unavailable 1 => closed unavailable, probe in 2s
+2s
admit => probe
fail unavailable 0.1 => closed unavailable, probe in 400ms
+400ms
admit => probe
fail unavailable 0.9 => closed unavailable, probe in 7.2s
+7.2s
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 8s
+8s
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 15s
+15s
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 15s
+15s
admit => probe
fail unavailable 0 => closed unavailable, probe due
admit => probe
success => open
admit => ok
fail unavailable 0.5 => open
fail unavailable 0.5 => open
fail unavailable 0.5 => closed unavailable, probe in 125ms
`)
}

// ensure that a success between unavailable answers, or any other answer,
// breaks the run of three.
func TestGateRunOfUnavailable(t *testing.T) {
	checkGate(t, `
fail unavailable 0.5 => open
fail unavailable 0.5 => open
success => open
fail unavailable 0.5 => open
fail unavailable 0.5 => open
fail rejected_record 0.5 => open
fail unavailable 0.5 => open
fail forbidden 0.5 => open
fail unavailable 0.5 => open
fail unavailable 0.5 => open
fail unavailable 0.5 => closed unavailable, probe in 125ms
`)
}

// ensure that a closed gate lets exactly one probe through, ignores answers
// to requests sent before it closed, and frees the probe slot on abandon.
func TestGateProbeExclusive(t *testing.T) {
	checkGate(t, `
fail tls_failed 0.5 => closed tls_failed, probe in 125ms
admit => wait 125ms
+100ms
admit => wait 25ms
+25ms
admit => probe
admit => busy 250ms
+1m
admit => busy 250ms
abandon => closed tls_failed, probe due
admit => probe
admit => busy 250ms
fail tls_failed 0.5 => closed tls_failed, probe in 250ms
fail unavailable 0.5 => closed tls_failed, probe in 250ms
fail auth_failed 0.5 => closed tls_failed, probe in 250ms
admit => wait 250ms
+250ms
admit => probe
fail forbidden 0.5 => closed tls_failed, probe in 500ms
+500ms
admit => probe
success => open
admit => ok
admit => ok
`)
}

// ensure that auth_failed waits 30 s at once, jitter or not, and that a
// new password opens the gate.
func TestGateAuthFailed(t *testing.T) {
	checkGate(t, `
fail auth_failed 0.1 => closed auth_failed, probe in 30s
admit => wait 30s
+29s
admit => wait 1s
+1s
admit => probe
fail auth_failed 0.9 => closed auth_failed, probe in 30s
+30s
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 15s
cred => open
admit => ok
fail auth_failed 0 => closed auth_failed, probe in 30s
cred => open
fail unavailable 0.5 => open
`)
}

// ensure that throttled waits its Retry-After up to 60 s, and the backoff
// when the answer gave none.
func TestGateThrottled(t *testing.T) {
	checkGate(t, `
fail throttled 0.5 5s => closed throttled, probe in 5s
+5s
admit => probe
fail throttled 0.5 2m => closed throttled, probe in 1m0s
+1m
admit => probe
fail throttled 0.5 => closed throttled, probe in 125ms
+125ms
admit => probe
fail throttled 0.5 => closed throttled, probe in 250ms
+250ms
admit => probe
fail throttled 0.5 1s => closed throttled, probe in 1s
+1s
admit => probe
fail unavailable 0.5 => closed unavailable, probe in 500ms
success => open
`)
}

// ensure that one lane's backoff goes 250 ms doubling to 2 s with full
// jitter and restarts after a success.
func TestLaneBackoff(t *testing.T) {
	var b LaneBackoff
	jitters := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 1, 0, 0.25}
	want := []time.Duration{125 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, time.Second, 2 * time.Second, 0, 500 * time.Millisecond}
	for i, j := range jitters {
		if got := b.Failure(j); got != want[i] {
			t.Fatalf("failure %d: wait %s, want %s", i+1, got, want[i])
		}
	}
	b.Success()
	if got := b.Failure(0.5); got != 125*time.Millisecond {
		t.Fatalf("after a success: %s", got)
	}
}

// ensure that a jitter outside [0,1) is clamped, never negative or longer
// than the step.
func TestFullJitterClamps(t *testing.T) {
	nan := 0.0
	nan /= nan
	for _, c := range []struct {
		j    float64
		want time.Duration
	}{{-1, 0}, {nan, 0}, {0, 0}, {0.5, 500 * time.Millisecond}, {1, time.Second}, {7, time.Second}} {
		if got := fullJitter(time.Second, c.j); got != c.want {
			t.Errorf("fullJitter(1s, %v) = %s, want %s", c.j, got, c.want)
		}
	}
}

// ensure that Backoff reads 0 while open and the current step while closed.
func TestGateBackoffReading(t *testing.T) {
	var g Gate
	now := time.Unix(1_700_000_000, 0)
	if g.Backoff() != 0 {
		t.Fatal("an open gate reports a backoff")
	}
	g.Failure(TLSFailed, now, 0, 0.5)
	if g.Backoff() != GateBackoffStart {
		t.Fatalf("after a TLS failure: %s", g.Backoff())
	}
	g.Success()
	if g.Backoff() != 0 {
		t.Fatalf("after a success: %s", g.Backoff())
	}
}

package deadletter_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
)

// ensure that Target sends a letter to its origin, or to the job's target
// when set, with the original key and payload, and refuses what is not a
// dead letter, an empty payload and a letter that would go back into the
// dead-letter topic, as ErrNotRedrivable.
func TestTargetOfALetter(t *testing.T) {
	t.Parallel()
	letter := deadletter.AppendLetter(nil, deadletter.Letter{Topic: "jobs", Partition: 1, Offset: 7, ReceiveCount: 3,
		Key: []byte{0xff, 0x00}, Payload: []byte(`{"job":1}`)})
	l, target, err := deadletter.Target(letter, "jobs-dlq", "")
	if err != nil || target != "jobs" || string(l.Key) != "\xff\x00" || string(l.Payload) != `{"job":1}` {
		t.Fatalf("origin: %q %q %v", target, l.Payload, err)
	}
	if _, target, err = deadletter.Target(letter, "jobs-dlq", "retry"); err != nil || target != "retry" {
		t.Fatalf("to: %q %v", target, err)
	}
	back := deadletter.AppendLetter(nil, deadletter.Letter{Topic: "jobs-dlq", Payload: []byte("x")})
	empty := deadletter.AppendLetter(nil, deadletter.Letter{Topic: "jobs"})
	for name, tc := range map[string]struct {
		payload []byte
		to      string
		want    string
	}{
		"not_json":       {[]byte("hello"), "", "not a dead letter: "},
		"no_fields":      {[]byte(`{"dead_letter":{"topic":"jobs"}}`), "", "not a dead letter: no dead_letter or payload field"},
		"empty_payload":  {empty, "", "its payload is empty"},
		"back_to_itself": {back, "", "names the dead-letter topic itself"},
		"to_itself":      {letter, "jobs-dlq", "names the dead-letter topic itself"},
	} {
		_, _, err := deadletter.Target(tc.payload, "jobs-dlq", tc.to)
		if !errors.Is(err, deadletter.ErrNotRedrivable) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotRedrivable saying %q", name, err, tc.want)
		}
	}
}

// ensure that a job's rules hold: an id, a rate up to the bound, a known
// state, an error within its cap, times that do not go back, and a target
// that is a valid name other than the dead-letter topic.
func TestJobValidate(t *testing.T) {
	t.Parallel()
	ok := deadletter.Job{ID: "0123456789abcdef", RatePerSec: 100, State: deadletter.RedriveRunning, StartedAtMs: 1, UpdatedAtMs: 1}
	if err := ok.Validate("dlq"); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*deadletter.Job){
		"no_id":       func(j *deadletter.Job) { j.ID = "" },
		"long_id":     func(j *deadletter.Job) { j.ID = strings.Repeat("a", deadletter.RedriveIDBytesMax+1) },
		"rate":        func(j *deadletter.Job) { j.RatePerSec = deadletter.RedriveRatePerSecMax + 1 },
		"state":       func(j *deadletter.Job) { j.State = "paused" },
		"long_error":  func(j *deadletter.Job) { j.Error = strings.Repeat("e", deadletter.RedriveErrorBytesMax+1) },
		"time_back":   func(j *deadletter.Job) { j.UpdatedAtMs = 0 },
		"to_itself":   func(j *deadletter.Job) { j.To = "dlq" },
		"to_bad_name": func(j *deadletter.Job) { j.To = "bad name" },
	} {
		j := ok
		mutate(&j)
		if err := j.Validate("dlq"); !errors.Is(err, domain.ErrInvalidArgument) {
			t.Errorf("%s: %v, want invalid argument", name, err)
		}
	}
}

// ensure that Remaining counts down to the cap and never past it, and is
// the limit without one.
func TestJobRemaining(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		max, moved uint64
		limit      int
		want       int
	}{{0, 500, 100, 100}, {250, 200, 100, 50}, {250, 250, 100, 0}, {250, 260, 100, 0}, {1000, 0, 100, 100}} {
		j := deadletter.Job{MaxMessages: tc.max, Moved: tc.moved}
		if got := j.Remaining(tc.limit); got != tc.want {
			t.Errorf("max %d moved %d: %d, want %d", tc.max, tc.moved, got, tc.want)
		}
	}
}

// ensure that TrimError keeps an error within its cap on a rune boundary.
func TestTrimError(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", deadletter.RedriveErrorBytesMax) // 2 bytes each
	got := deadletter.TrimError(long)
	if len(got) > deadletter.RedriveErrorBytesMax || !strings.HasPrefix(long, got) || len(got) < deadletter.RedriveErrorBytesMax-1 {
		t.Fatalf("trimmed to %d bytes", len(got))
	}
	if deadletter.TrimError("short") != "short" {
		t.Fatal("a short error changed")
	}
}

package deadletter

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/narad/narad/domain"
)

// The states of a redrive job (docs/api-extensions.md "Redrive"): running
// until its dead-letter topic brings nothing new or its cap is reached
// (done), a caller cancels it, or a target refuses a produce for good
// (failed, with the error).
const (
	RedriveRunning   = "running"
	RedriveDone      = "done"
	RedriveCancelled = "cancelled"
	RedriveFailed    = "failed"
)

// Bounds of a redrive job's fields.
const (
	// RedriveRatePerSecMax is the highest rate_per_sec a job takes (0 is
	// unlimited).
	RedriveRatePerSecMax = 100_000
	// RedriveRatePerSecDefault is the rate of a job whose request names none
	// (as narad redrive's --rate).
	RedriveRatePerSecDefault = 100
	// RedriveErrorBytesMax caps the error a failed job keeps.
	RedriveErrorBytesMax = 1024
	// RedriveIDBytesMax caps a job id.
	RedriveIDBytesMax = 64
)

// Job is one redrive of a dead-letter topic: what was asked, and how far it
// got. Moved and Skipped count dead letters redriven and left alone (not a
// dead letter, or a target that refused it for good).
type Job struct {
	ID          string `json:"id"`
	To          string `json:"to,omitempty"`           // every letter to this topic; empty: each to its origin
	RatePerSec  uint32 `json:"rate_per_sec"`           // 0: unlimited
	MaxMessages uint64 `json:"max_messages,omitempty"` // 0: all
	State       string `json:"state"`
	Moved       uint64 `json:"moved"`
	Skipped     uint64 `json:"skipped"`
	// Runs counts the workers that took the job up: more than one means a
	// new metadata leader resumed it.
	Runs        uint32 `json:"runs,omitempty"`
	Error       string `json:"error,omitempty"`
	By          string `json:"by,omitempty"` // who started it; empty with security off
	StartedAtMs int64  `json:"started_at_ms"`
	UpdatedAtMs int64  `json:"updated_at_ms"`
}

// Validate checks j as a job of dead-letter topic dlt. Errors wrap
// domain.ErrInvalidArgument and name the field as the API spells it.
func (j Job) Validate(dlt string) error {
	switch {
	case j.ID == "" || len(j.ID) > RedriveIDBytesMax || !utf8.ValidString(j.ID):
		return fmt.Errorf("%w: redrive.id must be 1 to %d bytes of UTF-8", domain.ErrInvalidArgument, RedriveIDBytesMax)
	case j.RatePerSec > RedriveRatePerSecMax:
		return fmt.Errorf("%w: rate_per_sec must be from 0 to %d", domain.ErrInvalidArgument, RedriveRatePerSecMax)
	case !validRedriveState(j.State):
		return fmt.Errorf("%w: redrive.state %q is not one of running, done, cancelled, failed", domain.ErrInvalidArgument, j.State)
	case len(j.Error) > RedriveErrorBytesMax:
		return fmt.Errorf("%w: redrive.error is over %d bytes", domain.ErrInvalidArgument, RedriveErrorBytesMax)
	case j.StartedAtMs < 0 || j.UpdatedAtMs < j.StartedAtMs:
		return fmt.Errorf("%w: redrive times must not go back", domain.ErrInvalidArgument)
	}
	if j.To == "" {
		return nil
	}
	if err := domain.ValidateTopicName(j.To); err != nil {
		return fmt.Errorf("%w: to: %w", domain.ErrInvalidArgument, err)
	}
	if j.To == dlt {
		return fmt.Errorf("%w: to names the dead-letter topic itself", domain.ErrInvalidArgument)
	}
	return nil
}

func validRedriveState(s string) bool {
	switch s {
	case RedriveRunning, RedriveDone, RedriveCancelled, RedriveFailed:
		return true
	}
	return false
}

// Running reports whether the job is still to run.
func (j Job) Running() bool { return j.State == RedriveRunning }

// Remaining is how many more letters the job may move before its cap, at
// most limit (limit when it has no cap).
func (j Job) Remaining(limit int) int {
	if j.MaxMessages == 0 {
		return limit
	}
	if j.Moved >= j.MaxMessages {
		return 0
	}
	return int(min(uint64(limit), j.MaxMessages-j.Moved))
}

// TrimError cuts msg to RedriveErrorBytesMax on a rune boundary.
func TrimError(msg string) string {
	if len(msg) <= RedriveErrorBytesMax {
		return msg
	}
	cut := RedriveErrorBytesMax
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

// ErrNotRedrivable marks a message of a dead-letter topic that a redrive
// leaves where it is; the error Target answers says why in its own words.
var ErrNotRedrivable = errors.New("not a dead letter to redrive")

// notRedrivable is a Target refusal: its text, and errors.Is
// ErrNotRedrivable.
type notRedrivable string

func (e notRedrivable) Error() string        { return string(e) }
func (e notRedrivable) Is(target error) bool { return target == ErrNotRedrivable }

// Target reads the dead letter in payload, a message of dead-letter topic
// dlt, and names the topic a redrive sends it to: to when set, else its
// origin. A message that is not a dead letter, carries an empty payload or
// would go back to dlt itself is refused with an error that is
// ErrNotRedrivable.
func Target(payload []byte, dlt, to string) (Letter, string, error) {
	l, err := ParseLetter(payload)
	if err != nil {
		return Letter{}, "", notRedrivable(strings.TrimPrefix(err.Error(), domain.ErrInvalidArgument.Error()+": "))
	}
	if len(l.Payload) == 0 {
		return Letter{}, "", notRedrivable("not a dead letter to redrive: its payload is empty")
	}
	target := cmp.Or(to, l.Topic)
	if target == dlt {
		return Letter{}, "", notRedrivable("not a dead letter to redrive: it names the dead-letter topic itself as its origin")
	}
	return l, target, nil
}

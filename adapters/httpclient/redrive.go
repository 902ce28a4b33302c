package httpclient

import (
	"context"
	"fmt"
	"net/http"
)

// States of a redrive job (docs/api-extensions.md "Redrive").
const (
	RedriveRunning   = "running"
	RedriveDone      = "done"
	RedriveCancelled = "cancelled"
	RedriveFailed    = "failed"
)

// Redrive is a server-side redrive job of a dead-letter topic, as
// /v1/topics/{topic}/redrive and the topic object's "redrive" show it.
// The server writes Moved, Skipped, Error and UpdatedAtMs about every 5 s
// while the job runs, and once more when it ends.
type Redrive struct {
	ID string `json:"id"`
	// To is the topic every letter goes to; "" sends each to its origin.
	To string `json:"to,omitempty"`
	// RatePerSec is the pace in letters a second; 0 is unlimited.
	RatePerSec int `json:"rate_per_sec"`
	// MaxMessages stops the job after that many moved; 0 is all.
	MaxMessages int64 `json:"max_messages"`
	// State is RedriveRunning, RedriveDone, RedriveCancelled or RedriveFailed.
	State   string `json:"state"`
	Moved   int64  `json:"moved"`
	Skipped int64  `json:"skipped"`
	// Runs counts the metadata leaders that took the job up; more than one
	// means it resumed after a leader change or a restart.
	Runs int `json:"runs"`
	// Error is the last error the job met, "" when none.
	Error       string `json:"error,omitempty"`
	StartedBy   string `json:"started_by,omitempty"`
	StartedAtMs int64  `json:"started_at_ms"`
	UpdatedAtMs int64  `json:"updated_at_ms"`
}

// Running reports whether the job still runs.
func (r Redrive) Running() bool { return r.State == RedriveRunning }

// RedriveOptions start a redrive job; zero fields take the server's
// defaults.
type RedriveOptions struct {
	// To sends every letter to this topic; "" sends each to its origin.
	To string
	// Rate is the pace in letters a second, 0 unlimited; nil is the
	// server's default (100).
	Rate *int
	// Max stops the job after that many letters moved; 0 is all.
	Max int
}

// redriveBody is the start request: absent fields take the defaults.
type redriveBody struct {
	To          string `json:"to,omitempty"`
	RatePerSec  *int   `json:"rate_per_sec,omitempty"`
	MaxMessages int    `json:"max_messages,omitempty"`
}

// StartRedrive starts a redrive job on a dead-letter topic (202). A job
// that already runs there answers 409; cancel it first.
func (c *Client) StartRedrive(ctx context.Context, topic string, o RedriveOptions) (Redrive, error) {
	body := redriveBody{To: o.To, RatePerSec: o.Rate, MaxMessages: o.Max}
	return c.redriveCall(ctx, http.MethodPost, topic, body)
}

// Redrive returns the last redrive job started on a topic; 404 when there
// was none.
func (c *Client) Redrive(ctx context.Context, topic string) (Redrive, error) {
	return c.redriveCall(ctx, http.MethodGet, topic, nil)
}

// CancelRedrive stops the running redrive job of a topic and returns it
// as cancelled; 409 when none runs.
func (c *Client) CancelRedrive(ctx context.Context, topic string) (Redrive, error) {
	return c.redriveCall(ctx, http.MethodDelete, topic, nil)
}

// redriveCall sends one request of the redrive route (body nil: none) and
// checks that the answer is a job.
func (c *Client) redriveCall(ctx context.Context, method, topic string, body any) (Redrive, error) {
	path := topicPath(topic, "/redrive")
	var j Redrive
	var err error
	if body != nil {
		err = c.sendJSON(ctx, method, path, body, &j)
	} else {
		var rep reply
		if rep, err = c.do(ctx, request{method: method, path: path}); err == nil {
			err = decodeReply(method, path, rep, &j)
		}
	}
	if err != nil {
		return Redrive{}, err
	}
	if j.ID == "" || j.State == "" {
		return Redrive{}, fmt.Errorf("%s %s: %w: no job id or state", method, path, ErrMalformedReply)
	}
	return j, nil
}

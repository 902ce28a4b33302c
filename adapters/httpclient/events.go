package httpclient

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// MaxEventsLimit is the largest page GET /v1/cluster/events serves.
const MaxEventsLimit = 1000

// Event is one applied entry of the metadata history (GET /v1/cluster/events).
type Event struct {
	Seq   uint64    `json:"seq"`
	Index uint64    `json:"index"`
	At    time.Time `json:"at"`
	// AtMs is At in Unix milliseconds, when the server sends it.
	AtMs int64 `json:"at_ms,omitempty"`
	// Actor is who proposed the change; empty for the cluster's own entries.
	Actor   string `json:"actor,omitempty"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
	// Result is "ok" or the refusal's code name (exists, not_found, conflict,
	// refused, protected, invalid).
	Result string `json:"result"`
	Detail string `json:"detail,omitempty"`
}

// EventsQuery selects one page of the history.
type EventsQuery struct {
	// Before asks for entries with a smaller sequence number; 0 starts from
	// the newest.
	Before uint64
	// Limit is the page size, 1 to MaxEventsLimit; 0 lets the server choose
	// (100).
	Limit int
	// Heartbeats includes the MemberHeartbeat entries, left out by default.
	Heartbeats bool
}

// EventPage is one page, newest first. NextBefore is the Before of the next
// (older) page, 0 when there is none.
type EventPage struct {
	Events     []Event `json:"events"`
	NextBefore uint64  `json:"next_before"`
}

// Events reads one page of the metadata history; an empty page has a
// non-nil, empty Events.
func (c *Client) Events(ctx context.Context, q EventsQuery) (*EventPage, error) {
	v := url.Values{}
	if q.Before > 0 {
		v.Set("before", strconv.FormatUint(q.Before, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Heartbeats {
		v.Set("heartbeats", "true")
	}
	var page EventPage
	if err := c.getJSON(ctx, "/v1/cluster/events", v, &page); err != nil {
		return nil, err
	}
	if page.Events == nil {
		page.Events = []Event{}
	}
	return &page, nil
}

package httpclient_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that Events sends only the set query parameters and decodes the page.
func TestEventsQueryAndPage(t *testing.T) {
	t.Parallel()
	page := `{"events":[` +
		`{"seq":42,"index":121,"at":"2026-12-03T08:00:01.5Z","at_ms":1796284801500,"type":"MemberHeartbeat","subject":"member n1","result":"ok"},` +
		`{"seq":41,"index":120,"at":"2026-12-03T08:00:00.123Z","actor":"alice","type":"CreateUser","subject":"user bob","result":"exists","detail":"already exists","future":true}` +
		`],"next_before":41}`
	cases := map[string]struct {
		q     httpclient.EventsQuery
		query map[string][]string
	}{
		"newest_server_default": {q: httpclient.EventsQuery{}, query: map[string][]string{}},
		"older_page":            {q: httpclient.EventsQuery{Before: 41, Limit: 2}, query: map[string][]string{"before": {"41"}, "limit": {"2"}}},
		"with_heartbeats":       {q: httpclient.EventsQuery{Limit: 1000, Heartbeats: true}, query: map[string][]string{"limit": {"1000"}, "heartbeats": {"true"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "admin", jsonAnswer(200, page))
			got, err := c.Events(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodGet || r.Path != "/v1/cluster/events" || !reflect.DeepEqual(r.Query, tc.query) || r.User != "admin" {
				t.Fatalf("sent %s %s %v as %q", r.Method, r.Path, r.Query, r.User)
			}
			want := []httpclient.Event{
				{Seq: 42, Index: 121, At: time.Date(2026, 12, 3, 8, 0, 1, 500e6, time.UTC), AtMs: 1796284801500, Type: "MemberHeartbeat", Subject: "member n1", Result: "ok"},
				{Seq: 41, Index: 120, At: time.Date(2026, 12, 3, 8, 0, 0, 123e6, time.UTC), Actor: "alice", Type: "CreateUser", Subject: "user bob", Result: "exists", Detail: "already exists"},
			}
			if got.NextBefore != 41 || len(got.Events) != 2 {
				t.Fatalf("page %+v", got)
			}
			for i := range want {
				if !got.Events[i].At.Equal(want[i].At) {
					t.Fatalf("event %d at %v, want %v", i, got.Events[i].At, want[i].At)
				}
				got.Events[i].At = want[i].At
			}
			if !reflect.DeepEqual(got.Events, want) {
				t.Fatalf("events %+v\nwant %+v", got.Events, want)
			}
		})
	}
}

// ensure that an empty history is an empty, non-nil page, and refusals and bad bodies are errors.
func TestEventsEdges(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(200, `{"events":null,"next_before":0}`), jsonAnswer(403, `{"error":"admin privileges required"}`), jsonAnswer(200, `{"events":[{"seq":1,"at":"yesterday"}]}`))
	got, err := c.Events(context.Background(), httpclient.EventsQuery{})
	if err != nil || got.Events == nil || len(got.Events) != 0 || got.NextBefore != 0 {
		t.Fatalf("empty: %+v %v", got, err)
	}
	if _, err := c.Events(context.Background(), httpclient.EventsQuery{}); httpclient.StatusOf(err) != 403 || err.Error() != "http 403: admin privileges required" {
		t.Fatalf("refused: %v", err)
	}
	if _, err := c.Events(context.Background(), httpclient.EventsQuery{}); !errors.Is(err, httpclient.ErrMalformedReply) {
		t.Fatalf("bad time: %v", err)
	}
}

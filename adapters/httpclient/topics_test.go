package httpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

func ptr[T any](v T) *T { return &v }

// ensure that create sends only the fields that are set, retention absent for the default and 0 for forever.
func TestCreateTopicSendsOnlySetFields(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		spec httpclient.TopicSpec
		want string
	}{
		"name_only":         {spec: httpclient.TopicSpec{Name: "orders"}, want: `{"name":"orders"}`},
		"keep_forever":      {spec: httpclient.TopicSpec{Name: "o", RetentionMs: ptr(int64(0))}, want: `{"name":"o","retention_ms":0}`},
		"every_field":       {spec: httpclient.TopicSpec{Name: "c", Partitions: 6, RetentionMs: ptr(int64(7200000)), VisibilityTimeoutMs: 20000, MaxInFlightPerPartition: 5, MaxAckedAheadPerPartition: 7, Schema: json.RawMessage(`{"type":"object"}`), Parent: "p", FanoutDelayMs: 1000}, want: `{"name":"c","partitions":6,"retention_ms":7200000,"visibility_timeout_ms":20000,"max_in_flight_per_partition":5,"max_acked_ahead_per_partition":7,"schema":{"type":"object"},"parent":"p","fanout_delay_ms":1000}`},
		"schema_keeps_html": {spec: httpclient.TopicSpec{Name: "s", Schema: json.RawMessage(`{"pattern":"<a&b>"}`)}, want: `{"name":"s","schema":{"pattern":"<a&b>"}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", jsonAnswer(201, `{"name":"orders","id":"00112233aabbccdd","partitions":3,"retention_ms":0,"visibility_timeout_ms":30000,"max_in_flight_per_partition":1024,"max_acked_ahead_per_partition":1024,"created_at":1783615560}`))
			got, err := c.CreateTopic(context.Background(), tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			r := rec.requests()[0]
			if r.Method != http.MethodPost || r.Path != "/v1/topics" || r.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("request %s %s %q", r.Method, r.Path, r.Header.Get("Content-Type"))
			}
			if string(r.Body) != tc.want {
				t.Fatalf("body\n%s\nwant\n%s", r.Body, tc.want)
			}
			if got.ID != "00112233aabbccdd" || got.Partitions != 3 || got.CreatedAt != 1783615560 {
				t.Fatalf("topic %+v", got)
			}
		})
	}
}

// ensure that ListTopics follows next_page_token through short and empty pages until it is empty.
func TestListTopicsFollowsEveryPage(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"":  `{"topics":[{"name":"a","partitions":3,"role":"standalone"}],"next_page_token":"a"}`,
		"a": `{"topics":[],"next_page_token":"c"}`,
		"c": `{"topics":[{"name":"d","partitions":4,"role":"parent","children":["e"]},{"name":"e","partitions":3,"role":"child","parent":"d"}],"next_page_token":""}`,
	}
	var tokens []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("page_token")
		tokens = append(tokens, tok)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(pages[tok] + "\n"))
	}))
	t.Cleanup(srv.Close)
	c, _ := httpclient.New(httpclient.Options{Servers: []string{srv.URL}})
	got, err := c.ListTopics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tp := range got {
		names = append(names, tp.Name)
	}
	if !reflect.DeepEqual(names, []string{"a", "d", "e"}) || !reflect.DeepEqual(tokens, []string{"", "a", "c"}) {
		t.Fatalf("names %v tokens %v", names, tokens)
	}
	if got[2].Parent != "d" || !reflect.DeepEqual(got[1].Children, []string{"e"}) {
		t.Fatalf("fields lost: %+v", got)
	}
}

// ensure that a server whose page token never advances is reported, not looped on.
func TestListTopicsRefusesAStuckToken(t *testing.T) {
	t.Parallel()
	c, _ := newRecorder(t, "", jsonAnswer(200, `{"topics":[],"next_page_token":"x"}`))
	if _, err := c.ListTopics(context.Background()); err == nil {
		t.Fatal("a token that repeats was followed without end")
	}
}

// ensure that describe decodes schema, partition stats and placeholders as §2.4 names them.
func TestTopicDecodesDescribe(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(200, `{"name":"pay","partitions":2,"retention_ms":3600000,"visibility_timeout_ms":30000,"max_in_flight_per_partition":1024,"max_acked_ahead_per_partition":1024,"created_at":1,"role":"standalone","schema_version":2,"schema":{"type":"object"},"partition_stats":[{"index":0,"segments":2,"oldest_offset":5,"next_offset":11,"high_watermark":10,"size_bytes":4096,"oldest_segment_at":100,"owner_node":"n1","status":"ok"},{"index":1,"segments":0,"oldest_offset":0,"next_offset":0,"high_watermark":0,"size_bytes":0,"status":"owner_unavailable","owner_liveness":"dead","owner_node":"n2"}],"partial":true,"future_field":1}`))
	got, err := c.Topic(context.Background(), "pay")
	if err != nil {
		t.Fatal(err)
	}
	if rec.requests()[0].Path != "/v1/topics/pay" {
		t.Fatalf("path %s", rec.requests()[0].Path)
	}
	want := []httpclient.PartitionStats{
		{Index: 0, Segments: 2, OldestOffset: 5, NextOffset: 11, HighWatermark: 10, SizeBytes: 4096, OldestSegmentAt: 100, OwnerNode: "n1", Status: "ok"},
		{Index: 1, Status: httpclient.StatusOwnerUnavailable, OwnerLiveness: "dead", OwnerNode: "n2"},
	}
	if !reflect.DeepEqual(got.PartitionStats, want) || !got.Partial || got.SchemaVersion != 2 || string(got.Schema) != `{"type":"object"}` {
		t.Fatalf("got %+v", got)
	}
	if !got.PartitionStats[0].Available() || got.PartitionStats[1].Available() {
		t.Fatal("Available() does not follow status")
	}
}

// ensure that alter sends a PATCH with only the set fields and returns the topic.
func TestAlterTopicSendsPatch(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(200, `{"name":"t","partitions":6,"retention_ms":0}`))
	got, err := c.AlterTopic(context.Background(), "t", httpclient.TopicAlter{RetentionMs: ptr(int64(0)), Partitions: 6, Schema: json.RawMessage(`true`), SchemaBaseVersion: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := rec.requests()[0]
	if r.Method != http.MethodPatch || string(r.Body) != `{"retention_ms":0,"partitions":6,"schema":true,"schema_base_version":3}` {
		t.Fatalf("%s body %s", r.Method, r.Body)
	}
	if got.Partitions != 6 {
		t.Fatalf("topic %+v", got)
	}
}

// ensure that delete answers nil on 204 and the API error on 404.
func TestDeleteTopic(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", canned{status: 204}, jsonAnswer(404, `{"error":"topic not found"}`))
	if err := c.DeleteTopic(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(context.Background(), "t"); httpclient.StatusOf(err) != 404 {
		t.Fatalf("second delete: %v", err)
	}
	if r := rec.requests()[0]; r.Method != http.MethodDelete || len(r.Query) != 0 {
		t.Fatalf("%s %v: the API's force must never be sent", r.Method, r.Query)
	}
}

// ensure that the schema history decodes every version, and no schema yields an empty list.
func TestSchemaHistory(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		body     string
		version  int
		versions int
	}{
		"two_versions": {body: `{"topic":"p","version":2,"versions":[{"version":1,"schema":{"type":"object"}},{"version":2,"schema":true}]}`, version: 2, versions: 2},
		"no_schema":    {body: `{"topic":"p","version":0,"versions":null}`, version: 0, versions: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, rec := newRecorder(t, "", jsonAnswer(200, tc.body))
			h, err := c.SchemaHistory(context.Background(), "p")
			if err != nil {
				t.Fatal(err)
			}
			if rec.requests()[0].Path != "/v1/topics/p/schema" || h.Version != tc.version || len(h.Versions) != tc.versions || h.Versions == nil {
				t.Fatalf("history %+v", h)
			}
		})
	}
}

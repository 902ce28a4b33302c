package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
)

func (r *topicRig) commit(t testing.TB, topic string, p int32, n int) {
	t.Helper()
	tp, ok, err := r.meta.Topic(topic)
	if err != nil || !ok {
		t.Fatalf("topic %q: %v", topic, err)
	}
	ref := domain.PartitionRef{Topic: topic, TopicID: domain.TopicID(tp.ID), Partition: p}
	for i := 0; i < n; i++ {
		if _, err := r.logs.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("m")}}); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *topicRig) listNames(t testing.TB, query string) (string, string) {
	t.Helper()
	rec := r.do(t, "GET", "/v1/topics"+query, "")
	want(t, rec, http.StatusOK, "")
	m := decodeMap(t, rec)
	var names []string
	for _, tp := range m["topics"].([]any) {
		obj := tp.(map[string]any)
		if obj["role"] != "standalone" {
			t.Fatalf("listed topic without role: %v", obj)
		}
		names = append(names, obj["name"].(string))
	}
	return strings.Join(names, ","), m["next_page_token"].(string)
}

// Ensure that the list pages by name with keyset tokens and validates limit
// (conformance 40-46).
func TestTopicListHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "GET", "/v1/topics", ""), http.StatusOK, `{"topics":[],"next_page_token":""}`+"\n")
	for _, n := range []string{"zebra", "alpha", "mango", "banana"} {
		want(t, r.do(t, "POST", "/v1/topics", `{"name":"`+n+`"}`), http.StatusCreated, "")
	}
	cases := []struct{ query, names, next string }{
		{"", "alpha,banana,mango,zebra", ""},
		{"?limit=2", "alpha,banana", "banana"},
		{"?limit=2&page_token=banana", "mango,zebra", ""},
		{"?limit=10&page_token=zzzz", "", ""},
		{"?limit=999999", "alpha,banana,mango,zebra", ""},
		{"?limit=4", "alpha,banana,mango,zebra", ""},
	}
	for _, c := range cases {
		if names, next := r.listNames(t, c.query); names != c.names || next != c.next {
			t.Errorf("%s: %s next %q, want %s next %q", c.query, names, next, c.names, c.next)
		}
	}
	for _, q := range []string{"?limit=0", "?limit=-5", "?limit=abc"} {
		want(t, r.do(t, "GET", "/v1/topics"+q, ""), http.StatusBadRequest, errorBody("limit must be a positive integer"))
	}
}

// Ensure that describe answers the topic, schema fields and one ok entry
// per local partition, and refuses bad partition parameters (conformance
// 47-50, 176).
func TestTopicDescribeHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"details"}`), http.StatusCreated, "")
	r.commit(t, "details", 2, 3)
	m := decodeMap(t, r.do(t, "GET", "/v1/topics/details", ""))
	if m["partitions"] != 3.0 || m["schema_version"] != 0.0 {
		t.Fatalf("describe: %v", m)
	}
	for _, k := range []string{"schema", "partial"} {
		if _, ok := m[k]; ok {
			t.Errorf("schema-less healthy describe has %q", k)
		}
	}
	stats := m["partition_stats"].([]any)
	if len(stats) != 3 {
		t.Fatalf("partition_stats: %v", stats)
	}
	for i, s := range stats {
		e := s.(map[string]any)
		for _, k := range []string{"segments", "oldest_offset", "next_offset", "high_watermark", "size_bytes"} {
			if _, ok := e[k]; !ok {
				t.Errorf("entry %d lacks %s", i, k)
			}
		}
		next, segments, size := 0.0, 0.0, 0.0
		if i == 2 {
			next, segments, size = 3, 1, 3 // the fake: one segment, 3 one-byte payloads
		}
		if e["index"] != float64(i) || e["status"] != "ok" || e["owner_node"] != "n1" || e["next_offset"] != next ||
			e["high_watermark"] != next || e["segments"] != segments || e["size_bytes"] != size {
			t.Errorf("entry %d: %v", i, e)
		}
		// oldest_segment_at: Unix seconds of the fake log's clock; omitted
		// when unknown (api.md §2.4).
		if at, ok := e["oldest_segment_at"]; (i == 2) != ok || (ok && at != float64(r.logs.Now().Unix())) {
			t.Errorf("entry %d oldest_segment_at: %v", i, e)
		}
	}
	one := decodeMap(t, r.do(t, "GET", "/v1/topics/details?partition=1", ""))
	if s := one["partition_stats"].([]any); len(s) != 1 || s[0].(map[string]any)["index"] != 1.0 {
		t.Errorf("?partition=1: %v", s)
	}
	for _, q := range []string{"?partition=3", "?partition=x", "?partition=-1"} {
		want(t, r.do(t, "GET", "/v1/topics/details"+q, ""), http.StatusBadRequest, errorBody("invalid partition"))
	}
	want(t, r.do(t, "GET", "/v1/topics/missing", ""), http.StatusNotFound, errorBody("topic not found"))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"typed","schema":{"type":"object","required":["id"]}}`), http.StatusCreated, "")
	m = decodeMap(t, r.do(t, "GET", "/v1/topics/typed", ""))
	if m["schema_version"] != 1.0 || m["schema"].(map[string]any)["type"] != "object" {
		t.Errorf("typed: %v", m)
	}
}

// Ensure that a topic placed on no node describes placeholders, never zeros
// with status ok, and says partial (api.md §2.7, B.3).
func TestTopicDescribePlaceholdersHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	r.meta.SetLeader(false)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"t"}`), http.StatusCreated, "")
	m := decodeMap(t, r.do(t, "GET", "/v1/topics/t", ""))
	if m["partial"] != true {
		t.Fatalf("partial: %v", m)
	}
	for _, s := range m["partition_stats"].([]any) {
		e := s.(map[string]any)
		if e["status"] != "owner_unavailable" || e["owner_liveness"] != "unassigned" {
			t.Errorf("placeholder: %v", e)
		}
		if _, ok := e["owner_node"]; ok {
			t.Errorf("unassigned placeholder names an owner: %v", e)
		}
	}
}

// Ensure that alter applies and refuses as api.md §2.8 says (conformance
// 52-58, 61, 62, 174).
func TestTopicAlterHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"t","max_in_flight_per_partition":5}`), http.StatusCreated, "")
	if m := decodeMap(t, r.do(t, "PATCH", "/v1/topics/t", `{"partitions":6}`)); m["partitions"] != 6.0 || m["role"] != "standalone" {
		t.Fatalf("grow: %v", m)
	}
	if s := decodeMap(t, r.do(t, "GET", "/v1/topics/t", ""))["partition_stats"].([]any); len(s) != 6 {
		t.Fatalf("stats after grow: %d", len(s))
	}
	for body, field := range map[string]string{`{"retention_ms":7200000}`: "retention_ms", `{"retention_ms":0}`: "retention_ms", `{"max_in_flight_per_partition":0}`: "max_in_flight_per_partition"} {
		m := decodeMap(t, r.do(t, "PATCH", "/v1/topics/t", body))
		wantV := map[string]float64{`{"retention_ms":7200000}`: 7200000, `{"retention_ms":0}`: 0, `{"max_in_flight_per_partition":0}`: 1024}[body]
		if m[field] != wantV {
			t.Errorf("%s: %s = %v", body, field, m[field])
		}
	}
	cases := []struct {
		body   string
		status int
		msg    string
	}{
		{`{}`, 400, "at least one of partitions, retention_ms, max_*_per_partition, or schema is required"},
		{`{"partitions":6}`, 400, "invalid argument: new partition count (6) must be greater than current (6); decrease is not supported"},
		{`{"partitions":5}`, 400, ""},
		{`{"partitions":109}`, 400, "invalid argument: partitions (109) exceeds topic.max_partitions (108)"},
		{`{"partitions":-2}`, 400, "partitions must be > 0"},
		{`{"retention_ms":-100}`, 400, ""},
		{`{"retention_ms":1800000}`, 400, ""},
		{`{"visibility_timeout_ms":1000}`, 400, `invalid json: json: unknown field "visibility_timeout_ms"`},
		{`{"schema":"not a valid json schema"}`, 400, ""},
		{`{"schema":null}`, 400, "invalid argument: schema: null is not a schema (a schema can never be removed)"},
	}
	for _, c := range cases {
		rec := r.do(t, "PATCH", "/v1/topics/t", c.body)
		if rec.Code != c.status || (c.msg != "" && rec.Body.String() != errorBody(c.msg)) {
			t.Errorf("%s: %d %s", c.body, rec.Code, rec.Body.String())
		}
	}
	want(t, r.do(t, "PATCH", "/v1/topics/missing", `{"retention_ms":0}`), http.StatusNotFound, errorBody("topic not found"))
	want(t, r.do(t, "PATCH", "/v1/topics/t", `{"retention_ms":7200000,"partitions":2}`), http.StatusBadRequest, "")
	if m := decodeMap(t, r.do(t, "GET", "/v1/topics/t", "")); m["retention_ms"] != 7200000.0 {
		t.Errorf("retention before the failing group: %v", m["retention_ms"])
	}
	v1 := `{"type":"object","properties":{"id":{"type":"integer"}}}`
	if m := decodeMap(t, r.do(t, "PATCH", "/v1/topics/t", `{"partitions":8,"retention_ms":9999000,"schema":`+v1+`}`)); m["partitions"] != 8.0 || m["retention_ms"] != 9999000.0 {
		t.Errorf("three groups: %v", m)
	}
}

// Ensure the schema history route and the schema rules of alter
// (conformance 60, 177-182).
func TestTopicSchemaHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"plain"}`), http.StatusCreated, "")
	want(t, r.do(t, "GET", "/v1/topics/plain/schema", ""), http.StatusOK, `{"topic":"plain","version":0,"versions":[]}`+"\n")
	want(t, r.do(t, "GET", "/v1/topics/missing/schema", ""), http.StatusNotFound, errorBody("topic not found"))
	v1 := `{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"pay","schema":`+v1+`}`), http.StatusCreated, "")
	same := `{"required":["id"],  "properties":{"id":{"type":"integer"}},"type":"object"}`
	want(t, r.do(t, "PATCH", "/v1/topics/pay", `{"schema":`+same+`}`), http.StatusOK, "")
	described := `{"type":"object","description":"payments","properties":{"id":{"type":"integer"}},"required":["id"]}`
	want(t, r.do(t, "PATCH", "/v1/topics/pay", `{"schema":`+described+`}`), http.StatusOK, "")
	want(t, r.do(t, "GET", "/v1/topics/pay/schema", ""), http.StatusOK, `{"topic":"pay","version":1,"versions":[{"version":1,"schema":`+v1+`}]}`+"\n")
	v2 := `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id"]}`
	want(t, r.do(t, "PATCH", "/v1/topics/pay", `{"schema":`+v2+`,"schema_base_version":5}`), http.StatusConflict, errorBody("schema version conflict"))
	want(t, r.do(t, "PATCH", "/v1/topics/pay", `{"schema":`+v2+`,"schema_base_version":1}`), http.StatusOK, "")
	want(t, r.do(t, "PATCH", "/v1/topics/pay", `{"schema":null}`), http.StatusBadRequest, "")
	for _, bad := range []string{
		`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"]}`,
		`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`,
		`{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}},"required":["id","note"]}`,
	} {
		rec := r.do(t, "PATCH", "/v1/topics/pay", `{"schema":`+bad+`}`)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "compatible") {
			t.Errorf("incompatible %s: %d %s", bad, rec.Code, rec.Body.String())
		}
	}
	m := decodeMap(t, r.do(t, "GET", "/v1/topics/pay/schema", ""))
	if vs := m["versions"].([]any); m["version"] != 2.0 || len(vs) != 2 || vs[0].(map[string]any)["version"] != 1.0 {
		t.Errorf("history: %v", m)
	}
}

// Ensure that delete answers 204 then 404, and a recreated name is empty
// with a new id (conformance 64, 65, 155, 168; story F21).
func TestTopicDeleteHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	first := decodeMap(t, r.do(t, "POST", "/v1/topics", `{"name":"t"}`))
	r.commit(t, "t", 0, 4)
	want(t, r.do(t, "DELETE", "/v1/topics/t?force=maybe", ""), http.StatusBadRequest, "")
	rec := r.do(t, "DELETE", "/v1/topics/t", "")
	want(t, rec, http.StatusNoContent, "")
	if rec.Body.Len() != 0 {
		t.Fatalf("204 with a body: %q", rec.Body.String())
	}
	want(t, r.do(t, "GET", "/v1/topics/t", ""), http.StatusNotFound, errorBody("topic not found"))
	want(t, r.do(t, "DELETE", "/v1/topics/t", ""), http.StatusNotFound, errorBody("topic not found"))
	second := decodeMap(t, r.do(t, "POST", "/v1/topics", `{"name":"t"}`))
	if second["id"] == first["id"] {
		t.Fatal("recreated topic kept its id")
	}
	for _, s := range decodeMap(t, r.do(t, "GET", "/v1/topics/t", ""))["partition_stats"].([]any) {
		if e := s.(map[string]any); e["next_offset"] != 0.0 || e["status"] != "ok" {
			t.Fatalf("recreated topic shows old records: %v", e)
		}
	}
}

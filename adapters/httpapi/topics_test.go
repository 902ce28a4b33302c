package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/adapters/jsonschema"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain/meta"
)

// topicRig is the topic routes over the real use case on fakes, with the
// real schema validator.
type topicRig struct {
	e    *gin.Engine
	meta *fake.MetaStore
	logs *fake.PartitionLogs
}

func newTopicRig(t testing.TB, opts ...topics.Option) *topicRig {
	t.Helper()
	r := &topicRig{meta: fake.NewMetaStore(), logs: fake.NewPartitionLogs()}
	if _, err := r.meta.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: &meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"}}); err != nil {
		t.Fatal(err)
	}
	defaults := topics.Defaults{Partitions: 3, MaxPartitions: 108, RetentionMs: 604_800_000, VisibilityMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024}
	svc, err := topics.New(r.meta, r.logs, jsonschema.New(jsonschema.Options{}), fake.NewClock(time.Now()), rand.Reader, defaults, "n1", opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.e = NewEngine(zap.NewNop(), TopicRoutes(svc, nil, zap.NewNop())...)
	return r
}

// do sends one request; POST and PATCH carry Content-Type: application/json.
func (r *topicRig) do(t testing.TB, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if method == http.MethodPost || method == http.MethodPatch {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	r.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusNoContent && rec.Code < 500 {
		checkJSONAnswer(t, rec)
	}
	return rec
}

// checkJSONAnswer: a JSON body ending in one "\n" with an exact length
// (conformance 9).
func checkJSONAnswer(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	body := rec.Body.String()
	if rec.Header().Get("Content-Type") != "application/json" || !strings.HasSuffix(body, "}\n") || strings.HasSuffix(body, "\n\n") {
		t.Fatalf("answer %d %q (%s)", rec.Code, body, rec.Header().Get("Content-Type"))
	}
	if cl := rec.Header().Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(body)) {
		t.Fatalf("Content-Length %s for %d bytes", cl, len(body))
	}
}

// want checks status and, when body is not "", the exact body.
func want(t testing.TB, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if rec.Code != status || (body != "" && rec.Body.String() != body) {
		t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), status, body)
	}
}

func decodeMap(t testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		t.Fatalf("%q: %v", rec.Body.String(), err)
	}
	return m
}

func errorBody(msg string) string { return string(appendErrorBody(nil, msg)) }

// Ensure that a create answers 201 with the defaults, an id and a current
// created_at, and no role for a standalone topic (conformance 18, 19, 30,
// 31, 169).
func TestTopicCreateDefaultsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	rec := r.do(t, "POST", "/v1/topics", `{"name":"defaults","owner":"mallory"}`)
	want(t, rec, http.StatusCreated, "")
	m := decodeMap(t, rec)
	for k, v := range map[string]float64{"partitions": 3, "retention_ms": 604800000, "visibility_timeout_ms": 30000,
		"max_in_flight_per_partition": 1024, "max_acked_ahead_per_partition": 1024} {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if id, _ := m["id"].(string); !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
		t.Errorf("id %v", m["id"])
	}
	if at, _ := m["created_at"].(float64); time.Since(time.Unix(int64(at), 0)).Abs() > 5*time.Second {
		t.Errorf("created_at %v", m["created_at"])
	}
	if _, ok := m["role"]; ok {
		t.Error("standalone create answer has a role")
	}
	if _, ok := m["owner"]; ok {
		t.Error("client-supplied owner was kept")
	}
	if g := decodeMap(t, r.do(t, "GET", "/v1/topics/defaults", "")); g["role"] != "standalone" {
		t.Errorf("describe role %v", g["role"])
	}
	m = decodeMap(t, r.do(t, "POST", "/v1/topics", `{"name":"explicit","partitions":8,"retention_ms":3600000}`))
	if m["partitions"] != 8.0 || m["retention_ms"] != 3600000.0 {
		t.Errorf("explicit: %v", m)
	}
	if m = decodeMap(t, r.do(t, "POST", "/v1/topics", `{"name":"forever","retention_ms":0}`)); m["retention_ms"] != 0.0 {
		t.Errorf("forever: %v", m)
	}
}

// Ensure that create refusals carry the spec's status and message
// (conformance 20-27, 29, 36, 37, 167, 183, 184).
func TestTopicCreateRefusalsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"orders"}`), http.StatusCreated, "")
	cases := []struct {
		body   string
		status int
		msg    string // exact; "" checks the status only; "~x" checks a prefix
	}{
		{`{"name":"orders"}`, 409, "topic already exists"},
		{`{"name":"Orders"}`, 409, `topic "Orders" differs only in letter case from existing topic "orders"`},
		{`{"name":""}`, 400, "invalid argument: name required"},
		{`{"name":"a b"}`, 400, ""},
		{`{"name":"a/b"}`, 400, ""},
		{`{"name":"."}`, 400, `invalid argument: topic name must not be "."`},
		{`{"name":".."}`, 400, ""},
		{`{"name":"` + strings.Repeat("x", 201) + `"}`, 400, ""},
		{`{"name":"p","partitions":-1}`, 400, ""},
		{`{"name":"p","partitions":1}`, 400, "invalid argument: partitions must be >= 3 (0 = use default)"},
		{`{"name":"p","partitions":109}`, 400, ""},
		{`{"name":"p","retention_ms":-1}`, 400, ""},
		{`{"name":"p","retention_ms":1800000}`, 400, "invalid argument: retention_ms (1800000) is below the minimum of 3600000 (1 hour)"},
		{`{not json}`, 400, "~invalid json: "},
		{``, 400, "invalid json: EOF"},
		{`{"name":"x","garbage":"nope"}`, 400, `invalid json: json: unknown field "garbage"`},
		{`{"name":"x"} {"name":"y"}`, 400, "invalid json: multiple JSON values"},
		{`{"name":"x2","fanout_delay_ms":1000}`, 400, "invalid argument: fanout_delay_ms requires parent"},
		{`{"name":"x3","parent":"x3"}`, 400, ""},
		{`{"name":"x3","parent":"orders","fanout_delay_ms":-1}`, 400, ""},
		{`{"name":"x3","parent":"orders","fanout_delay_ms":31536000001}`, 400, ""},
		{`{"name":"s1","schema":{"type":123}}`, 400, "~invalid argument: schema: "},
		{`{"name":"s2","schema":false}`, 400, "~invalid argument: schema: "},
		{`{"name":"s3","schema":"text"}`, 400, ""},
		{`{"name":"s4","schema":[1]}`, 400, ""},
		{`{"name":"s5","schema":{"$ref":"https://example.com/x.json"}}`, 400, "~invalid argument: schema: "},
	}
	for _, c := range cases {
		rec := r.do(t, "POST", "/v1/topics", c.body)
		switch {
		case rec.Code != c.status:
			t.Errorf("%.60s: %d %s, want %d", c.body, rec.Code, rec.Body.String(), c.status)
		case strings.HasPrefix(c.msg, "~"):
			if m := decodeMap(t, rec); !strings.HasPrefix(m["error"].(string), c.msg[1:]) {
				t.Errorf("%.60s: %q", c.body, m["error"])
			}
		case c.msg != "" && rec.Body.String() != errorBody(c.msg):
			t.Errorf("%.60s: %q, want %q", c.body, rec.Body.String(), errorBody(c.msg))
		}
	}
	for _, name := range []string{"Orders", "s1", "s5", "x2", "x3"} {
		want(t, r.do(t, "GET", "/v1/topics/"+name, ""), 404, errorBody("topic not found"))
	}
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"s6","schema":true}`), http.StatusCreated, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"`+strings.Repeat("y", 200)+`"}`), http.StatusCreated, "")
}

// Ensure that the body cap is exactly 1 MiB: at the cap a create is
// served, one byte over answers 413 (conformance 27; api.md §0.2).
func TestTopicBodyCapHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	at := `{"name":"big"` + strings.Repeat(" ", topicBodyMaxBytes-len(`{"name":"big"}`)) + `}`
	want(t, r.do(t, "POST", "/v1/topics", at), http.StatusCreated, "")
	over := at + " "
	want(t, r.do(t, "POST", "/v1/topics", over), http.StatusRequestEntityTooLarge, errorBody("request body too large"))
	want(t, r.do(t, "PATCH", "/v1/topics/big", over), http.StatusRequestEntityTooLarge, errorBody("request body too large"))
}

// Ensure that the 415 rule holds on create: X-Narad-Client alone passes,
// nothing fails and creates nothing (conformance 151, 153, 155).
func TestTopicCreate415HTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	req := httptest.NewRequest("POST", "/v1/topics", strings.NewReader(`{"name":"t"}`))
	rec := httptest.NewRecorder()
	r.e.ServeHTTP(rec, req)
	want(t, rec, http.StatusUnsupportedMediaType, errorBody(msg415))
	want(t, r.do(t, "GET", "/v1/topics/t", ""), 404, "")
	req = httptest.NewRequest("POST", "/v1/topics", strings.NewReader(`{"name":"t"}`))
	req.Header.Set("X-Narad-Client", "conformance")
	rec = httptest.NewRecorder()
	r.e.ServeHTTP(rec, req)
	want(t, rec, http.StatusCreated, "")
	want(t, r.do(t, "DELETE", "/v1/topics/t", ""), http.StatusNoContent, "")
}

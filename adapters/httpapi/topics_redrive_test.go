package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Ensure that a redrive job starts with 202 and the job object (an empty
// body takes the defaults), is read back on its own route and in the
// topic object, that a second start is a 409, that a cancel answers the
// job as cancelled, and that a topic without a job answers 404 to a read
// and 409 to a cancel.
func TestRedriveJobHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"jobs-dlq"}`), http.StatusCreated, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"retry"}`), http.StatusCreated, "")
	want(t, r.do(t, "GET", "/v1/topics/jobs-dlq/redrive", ""), http.StatusNotFound, errorBody("no redrive job on this topic"))
	want(t, r.do(t, "GET", "/v1/topics/ghost/redrive", ""), http.StatusNotFound, errorBody("topic not found"))
	want(t, r.do(t, "DELETE", "/v1/topics/jobs-dlq/redrive", ""), http.StatusConflict, errorBody(`topic "jobs-dlq" runs no redrive job`))

	rec := r.do(t, "POST", "/v1/topics/jobs-dlq/redrive", "")
	want(t, rec, http.StatusAccepted, "")
	j := decodeMap(t, rec)
	id, _ := j["id"].(string)
	if len(id) != 16 || j["state"] != "running" || j["rate_per_sec"] != 100.0 || j["max_messages"] != 0.0 ||
		j["moved"] != 0.0 || j["skipped"] != 0.0 || j["runs"] != 0.0 || j["to"] != nil || j["started_by"] != nil || j["started_at_ms"] == nil {
		t.Fatalf("start answer: %s", rec.Body)
	}
	want(t, r.do(t, "POST", "/v1/topics/jobs-dlq/redrive", `{}`), http.StatusConflict,
		errorBody(`topic "jobs-dlq" already runs redrive `+id+"; cancel it first"))
	rec = r.do(t, "GET", "/v1/topics/jobs-dlq/redrive", "")
	if want(t, rec, http.StatusOK, ""); decodeMap(t, rec)["id"] != id {
		t.Fatalf("read: %s", rec.Body)
	}
	rec = r.do(t, "GET", "/v1/topics/jobs-dlq", "")
	if rd, ok := decodeMap(t, rec)["redrive"].(map[string]any); !ok || rd["id"] != id {
		t.Fatalf("describe: %s", rec.Body)
	}
	rec = r.do(t, "DELETE", "/v1/topics/jobs-dlq/redrive", "")
	if want(t, rec, http.StatusOK, ""); decodeMap(t, rec)["state"] != "cancelled" {
		t.Fatalf("cancel: %s", rec.Body)
	}
	rec = r.do(t, "POST", "/v1/topics/jobs-dlq/redrive", `{"to":"retry","rate_per_sec":0,"max_messages":50}`)
	want(t, rec, http.StatusAccepted, "")
	if j := decodeMap(t, rec); j["to"] != "retry" || j["rate_per_sec"] != 0.0 || j["max_messages"] != 50.0 {
		t.Fatalf("start with fields: %s", rec.Body)
	}
}

// Ensure that a bad start is a 400 naming the field, an unknown field or a
// second JSON value is refused, and a body over 1 MiB is a 413.
func TestRedriveJobRefusalsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"dlq"}`), http.StatusCreated, "")
	for body, msg := range map[string]string{
		`{"rate_per_sec":100001}`: "invalid argument: rate_per_sec must be from 0 to 100000",
		`{"rate_per_sec":-1}`:     "invalid argument: rate_per_sec must be from 0 to 100000",
		`{"max_messages":-1}`:     "invalid argument: max_messages must be 0 (all) or more",
		`{"to":""}`:               "invalid argument: to must name a topic; leave it out to send each letter to its origin",
		`{"to":"dlq"}`:            "invalid argument: to names the dead-letter topic itself",
		`{"to":"nowhere"}`:        "invalid argument: to names no topic: nowhere",
		`{"rate":5}`:              `invalid json: json: unknown field "rate"`,
		`{} {}`:                   "invalid json: multiple JSON values",
	} {
		want(t, r.do(t, "POST", "/v1/topics/dlq/redrive", body), http.StatusBadRequest, errorBody(msg))
	}
	want(t, r.do(t, "POST", "/v1/topics/dlq/redrive", `{"rate_per_sec":"5"}`), http.StatusBadRequest, "")
	want(t, r.do(t, "POST", "/v1/topics/ghost/redrive", `{}`), http.StatusNotFound, errorBody("topic not found"))
	big := `{"to":"` + strings.Repeat("a", 1<<20) + `"}`
	want(t, r.do(t, "POST", "/v1/topics/dlq/redrive", big), http.StatusRequestEntityTooLarge, "")
}

package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that create, alter and describe carry a topic's redelivery
// backoff: an object sets it with defaults filled in, null in an alter
// clears it, and a topic without one answers without the field.
func TestTopicRedeliveryHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	rec := r.do(t, "POST", "/v1/topics", `{"name":"jobs","redelivery":{"initial_ms":1000,"jitter":0.2}}`)
	want(t, rec, http.StatusCreated, "")
	red, ok := decodeMap(t, rec)["redelivery"].(map[string]any)
	if !ok || red["initial_ms"] != 1000.0 || red["multiplier"] != 2.0 || red["max_ms"] != 600000.0 || red["jitter"] != 0.2 {
		t.Fatalf("create answer: %s", rec.Body)
	}
	rec = r.do(t, "PATCH", "/v1/topics/jobs", `{"redelivery":{"initial_ms":50,"multiplier":1.5,"max_ms":400}}`)
	want(t, rec, http.StatusOK, "")
	if tp, _, _ := r.meta.Topic("jobs"); tp.Redelivery == nil || *tp.Redelivery != (meta.Redelivery{InitialMs: 50, Multiplier: 1.5, MaxMs: 400}) {
		t.Fatalf("after alter: %+v", tp.Redelivery)
	}
	rec = r.do(t, "GET", "/v1/topics/jobs", "")
	if red, ok := decodeMap(t, rec)["redelivery"].(map[string]any); !ok || red["max_ms"] != 400.0 {
		t.Fatalf("describe: %s", rec.Body)
	}
	rec = r.do(t, "PATCH", "/v1/topics/jobs", `{"redelivery":null}`)
	want(t, rec, http.StatusOK, "")
	if _, has := decodeMap(t, rec)["redelivery"]; has {
		t.Fatalf("cleared policy still answered: %s", rec.Body)
	}
	if tp, _, _ := r.meta.Topic("jobs"); tp.Redelivery != nil {
		t.Fatalf("after clear: %+v", tp.Redelivery)
	}
}

// Ensure that a bad policy is a 400 naming the field, an unknown field
// inside it is refused like one at the top, and a member on an older
// release makes it a 412.
func TestTopicRedeliveryRefusalsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","redelivery":{"initial_ms":0}}`), http.StatusBadRequest,
		errorBody("invalid argument: redelivery.initial_ms must be from 1 to 43200000 (milliseconds)"))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","redelivery":{"initial_ms":10,"backoff":2}}`), http.StatusBadRequest,
		errorBody(`invalid json: json: unknown field "backoff"`))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","redelivery":{"initial_ms":"10"}}`), http.StatusBadRequest, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a"}`), http.StatusCreated, "")
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"redelivery":{"initial_ms":10,"max_ms":5}}`), http.StatusBadRequest,
		errorBody("invalid argument: redelivery.max_ms must be from initial_ms (10) to 43200000 (milliseconds)"))
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"redelivery":{"initial_ms":10,"x":1}}`), http.StatusBadRequest,
		errorBody(`invalid json: redelivery: json: unknown field "x"`))
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"redelivery":[1]}`), http.StatusBadRequest, "")

	if _, err := r.meta.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: &meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943"}}); err != nil {
		t.Fatal(err)
	}
	rec := r.do(t, "PATCH", "/v1/topics/a", `{"redelivery":{"initial_ms":10}}`)
	want(t, rec, http.StatusPreconditionFailed, "")
}

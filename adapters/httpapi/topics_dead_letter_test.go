package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// Ensure that create, alter and describe carry a topic's dead-letter
// policy: an object sets it, null in an alter clears it, and a topic
// without one answers without the field.
func TestTopicDeadLetterHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"jobs-dlq"}`), http.StatusCreated, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"other-dlq"}`), http.StatusCreated, "")
	rec := r.do(t, "POST", "/v1/topics", `{"name":"jobs","dead_letter":{"topic":"jobs-dlq","max_receive_count":5}}`)
	want(t, rec, http.StatusCreated, "")
	dl, ok := decodeMap(t, rec)["dead_letter"].(map[string]any)
	if !ok || dl["topic"] != "jobs-dlq" || dl["max_receive_count"] != 5.0 || len(dl) != 2 {
		t.Fatalf("create answer: %s", rec.Body)
	}
	rec = r.do(t, "PATCH", "/v1/topics/jobs", `{"dead_letter":{"topic":"other-dlq","max_receive_count":1000}}`)
	want(t, rec, http.StatusOK, "")
	if tp, _, _ := r.meta.Topic("jobs"); tp.DeadLetter == nil || *tp.DeadLetter != (meta.DeadLetter{Topic: "other-dlq", MaxReceiveCount: 1000}) {
		t.Fatalf("after alter: %+v", tp.DeadLetter)
	}
	rec = r.do(t, "GET", "/v1/topics/jobs", "")
	if dl, ok := decodeMap(t, rec)["dead_letter"].(map[string]any); !ok || dl["topic"] != "other-dlq" {
		t.Fatalf("describe: %s", rec.Body)
	}
	rec = r.do(t, "PATCH", "/v1/topics/jobs", `{"dead_letter":null}`)
	want(t, rec, http.StatusOK, "")
	if _, has := decodeMap(t, rec)["dead_letter"]; has {
		t.Fatalf("cleared policy still answered: %s", rec.Body)
	}
	if tp, _, _ := r.meta.Topic("jobs"); tp.DeadLetter != nil {
		t.Fatalf("after clear: %+v", tp.DeadLetter)
	}
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"nulled","dead_letter":null}`), http.StatusCreated, "")
}

// Ensure that a bad policy is a 400 naming the field, an unknown field
// inside it is refused like one at the top, and a member on an older
// release makes it a 412.
func TestTopicDeadLetterRefusalsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"dlq"}`), http.StatusCreated, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","dead_letter":{"topic":"dlq","max_receive_count":0}}`), http.StatusBadRequest,
		errorBody("invalid argument: dead_letter.max_receive_count must be from 1 to 1000"))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","dead_letter":{"topic":"dlq"}}`), http.StatusBadRequest,
		errorBody("invalid argument: dead_letter.max_receive_count is required"))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","dead_letter":{"topic":"nowhere","max_receive_count":3}}`), http.StatusBadRequest,
		errorBody("invalid argument: dead_letter.topic names no topic: nowhere"))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","dead_letter":{"topic":"dlq","max_receive_count":3,"queue":"x"}}`), http.StatusBadRequest,
		errorBody(`invalid json: json: unknown field "queue"`))
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a","dead_letter":{"topic":"dlq","max_receive_count":"3"}}`), http.StatusBadRequest, "")
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"a"}`), http.StatusCreated, "")
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"dead_letter":{"max_receive_count":3}}`), http.StatusBadRequest,
		errorBody("invalid argument: dead_letter.topic is required"))
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"dead_letter":{"topic":"a","max_receive_count":3}}`), http.StatusBadRequest,
		errorBody(`invalid argument: dead_letter.topic must name another topic than "a"`))
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"dead_letter":{"topic":"dlq","max_receive_count":3,"x":1}}`), http.StatusBadRequest,
		errorBody(`invalid json: dead_letter: json: unknown field "x"`))
	want(t, r.do(t, "PATCH", "/v1/topics/a", `{"dead_letter":[1]}`), http.StatusBadRequest, "")

	if _, err := r.meta.Propose(context.Background(), meta.Envelope{AtMs: 1, Event: &meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943"}}); err != nil {
		t.Fatal(err)
	}
	rec := r.do(t, "PATCH", "/v1/topics/a", `{"dead_letter":{"topic":"dlq","max_receive_count":3}}`)
	want(t, rec, http.StatusPreconditionFailed, "")
}

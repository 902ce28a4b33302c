package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// mustCreate creates a topic over HTTP or fails the test.
func (r *topicRig) mustCreate(t *testing.T, body string) {
	t.Helper()
	if rec := r.do(t, "POST", "/v1/topics", body); rec.Code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", body, rec.Code, rec.Body)
	}
}

// wantPrefix checks status and that the error message starts with prefix.
func wantPrefix(t *testing.T, rec interface {
	Result() *http.Response
}, status int, body, prefix string) {
	t.Helper()
	if got := rec.Result().StatusCode; got != status || !strings.HasPrefix(body, `{"error":"`+prefix) {
		t.Fatalf("got %d %s, want %d with an error starting %q", got, body, status, prefix)
	}
}

// Ensure that an attach answers the parent with role parent and the child,
// and the child then reads as a child (conformance 68); detach turns it
// back into a standalone topic (api.md §2.12).
func TestAttachDetachHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	r.mustCreate(t, `{"name":"p"}`)
	r.mustCreate(t, `{"name":"c"}`)
	rec := r.do(t, "POST", "/v1/topics/p/children", `{"child":"c"}`)
	m := decodeMap(t, rec)
	if rec.Code != http.StatusOK || m["role"] != "parent" || m["name"] != "p" {
		t.Fatalf("attach: %d %v", rec.Code, m)
	}
	if ch, _ := m["children"].([]any); len(ch) != 1 || ch[0] != "c" {
		t.Fatalf("children %v", m["children"])
	}
	c := decodeMap(t, r.do(t, "GET", "/v1/topics/c", ""))
	if c["role"] != "child" || c["parent"] != "p" || c["attach_epoch"] == nil {
		t.Fatalf("child view %v", c)
	}
	want(t, r.do(t, "DELETE", "/v1/topics/p/children/c", ""), http.StatusNoContent, "")
	c = decodeMap(t, r.do(t, "GET", "/v1/topics/c", ""))
	if c["role"] != "standalone" || c["parent"] != nil || c["attach_epoch"] != nil || c["attach_offsets"] != nil {
		t.Fatalf("detached child %v", c)
	}
	want(t, r.do(t, "DELETE", "/v1/topics/p/children/c", ""), http.StatusNotFound, errorBody("topic not found"))
}

// Ensure that attach refusals answer the spec's statuses (conformance 69,
// 70, 73, 75) and api.md §2.10.1's field messages.
func TestAttachRefusalsHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	for _, b := range []string{`{"name":"p"}`, `{"name":"c"}`, `{"name":"q"}`, `{"name":"x"}`,
		`{"name":"short","retention_ms":7200000}`, `{"name":"s1","schema":{"type":"object"}}`,
		`{"name":"s2","schema":{"type":"string"}}`} {
		r.mustCreate(t, b)
	}
	want(t, r.do(t, "POST", "/v1/topics/p/children", `{"child":"c"}`), http.StatusOK, "")
	for _, tc := range []struct {
		path, body string
		status     int
		prefix     string
	}{
		{"/v1/topics/nope/children", `{"child":"x"}`, 404, "topic not found"},
		{"/v1/topics/p/children", `{"child":"nope"}`, 404, "topic not found"},
		{"/v1/topics/p/children", `{"child":"p"}`, 400, "invalid argument: a topic cannot be attached to itself"},
		{"/v1/topics/p/children", `{}`, 400, "child is required"},
		{"/v1/topics/p/children", `{"child":"x","delay_ms":-1}`, 400, "delay_ms must be >= 0"},
		{"/v1/topics/p/children", `{"child":"x","delay_ms":31536000001}`, 400, "invalid argument: delay_ms (31536000001) exceeds the maximum of 31536000000 (1 year)"},
		{"/v1/topics/p/children", `{"child":"x","garbage":1}`, 400, "invalid json: "},
		{"/v1/topics/c/children", `{"child":"x"}`, 409, "fan-out role conflict: "},
		{"/v1/topics/x/children", `{"child":"p"}`, 409, "fan-out role conflict: "},
		{"/v1/topics/q/children", `{"child":"c"}`, 409, "fan-out role conflict: "},
		{"/v1/topics/p/children", `{"child":"c"}`, 409, `already exists: \"c\" is already attached to \"p\"`},
		{"/v1/topics/short/children", `{"child":"x","delay_ms":3600001}`, 409, "delay exceeds what the parent's retention can buffer"},
		{"/v1/topics/x/children", `{"child":"s1"}`, 409, "child schema incompatible with parent: "},
		{"/v1/topics/s2/children", `{"child":"s1"}`, 409, "child schema incompatible with parent: "},
	} {
		rec := r.do(t, "POST", tc.path, tc.body)
		wantPrefix(t, rec, tc.status, rec.Body.String(), tc.prefix)
	}
	want(t, r.do(t, "POST", "/v1/topics/short/children", `{"child":"x","delay_ms":1500}`), http.StatusOK, "")
	big := `{"child":"` + strings.Repeat("a", 1<<20) + `"}`
	if rec := r.do(t, "POST", "/v1/topics/p/children", big); rec.Code != http.StatusBadRequest {
		t.Fatalf("an attach body over 1 MiB: %d, want 400", rec.Code)
	}
}

// Ensure that a delay child holds its parent's retention at delay + 1 h
// until it is detached (conformance 74), and that deleting a parent leaves
// its child standalone (conformance 66).
func TestDelayChildRetentionAndParentDeleteHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	r.mustCreate(t, `{"name":"p","retention_ms":7200000}`)
	r.mustCreate(t, `{"name":"d","parent":"p","fanout_delay_ms":1500}`)
	rec := r.do(t, "PATCH", "/v1/topics/p", `{"retention_ms":3600000}`)
	wantPrefix(t, rec, http.StatusConflict, rec.Body.String(), "delay exceeds what the parent's retention can buffer")
	want(t, r.do(t, "PATCH", "/v1/topics/p", `{"retention_ms":3700000}`), http.StatusOK, "")
	want(t, r.do(t, "DELETE", "/v1/topics/p/children/d", ""), http.StatusNoContent, "")
	want(t, r.do(t, "PATCH", "/v1/topics/p", `{"retention_ms":3600000}`), http.StatusOK, "")

	r.mustCreate(t, `{"name":"c","parent":"p"}`)
	want(t, r.do(t, "DELETE", "/v1/topics/p", ""), http.StatusNoContent, "")
	if c := decodeMap(t, r.do(t, "GET", "/v1/topics/c", "")); c["role"] != "standalone" || c["parent"] != nil {
		t.Fatalf("child of a deleted parent: %v", c)
	}
}

// Conformance 77: the listing's body is exactly {"parent","parent_id",
// "children":[{"name","delay_ms","lag_messages","lag_complete"}]}, children
// in attach order, with the lag the cursors report; conformance 78: a
// standalone topic and a child answer "children":[] and a missing topic
// 404; a partitions flag other than true/false is a 400 (api.md §2.11).
func TestListChildrenHTTP(t *testing.T) {
	t.Parallel()
	lag := fake.NewPeerFanoutLag()
	r := newTopicRig(t, topics.WithFanoutLag(lag.On("n1")))
	r.mustCreate(t, `{"name":"p","partitions":3}`)
	r.mustCreate(t, `{"name":"c"}`)
	r.mustCreate(t, `{"name":"alone"}`)
	r.mustCreate(t, `{"name":"d","parent":"p","fanout_delay_ms":1500}`)
	want(t, r.do(t, "POST", "/v1/topics/p/children", `{"child":"c"}`), http.StatusOK, "")
	p, _, _ := r.meta.Topic("p")
	for _, name := range []string{"c", "d"} {
		child, _, _ := r.meta.Topic(name)
		for i := range p.Partitions {
			ref := domain.PartitionRef{Topic: "p", TopicID: domain.TopicID(p.ID), Partition: i}
			lag.Own("n1", ref, 7)
			if name == "c" || i != 2 { // d's cursor on partition 2 has not anchored
				lag.Cursor("n1", ref, name, ports.FanoutCursor{Epoch: child.AttachEpoch, NextOffset: 5})
			}
		}
	}
	wantBody := `{"parent":"p","parent_id":"` + p.ID + `","children":[` +
		`{"name":"d","delay_ms":1500,"lag_messages":4,"lag_complete":false},` +
		`{"name":"c","delay_ms":0,"lag_messages":6,"lag_complete":true}]}` + "\n"
	for _, q := range []string{"", "?partitions=true", "?partitions=false"} {
		want(t, r.do(t, "GET", "/v1/topics/p/children"+q, ""), http.StatusOK, wantBody)
	}
	for _, name := range []string{"alone", "c"} {
		id, _, _ := r.meta.Topic(name)
		want(t, r.do(t, "GET", "/v1/topics/"+name+"/children", ""), http.StatusOK,
			`{"parent":"`+name+`","parent_id":"`+id.ID+`","children":[]}`+"\n")
	}
	want(t, r.do(t, "GET", "/v1/topics/nope/children", ""), http.StatusNotFound, errorBody("topic not found"))
	for _, q := range []string{"?partitions=yes", "?partitions=", "?partitions=TRUE"} {
		want(t, r.do(t, "GET", "/v1/topics/p/children"+q, ""), http.StatusBadRequest, errorBody("invalid partitions: must be true or false"))
	}
}

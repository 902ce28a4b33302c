package httpapi

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Ensure that POST /v1/topics with a parent answers 201 with the attached
// child view (conformance 33) and GET shows the link from both ends.
func TestTopicCreateAsChildHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"rp","partitions":3}`), http.StatusCreated, "")
	rec := r.do(t, "POST", "/v1/topics", `{"name":"rc","parent":"rp"}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create-as-child: %d %s", rec.Code, rec.Body)
	}
	m := decodeMap(t, rec)
	offsets, _ := m["attach_offsets"].([]any)
	epoch, _ := m["attach_epoch"].(string)
	if m["role"] != "child" || m["parent"] != "rp" || m["partitions"] != 3.0 || len(offsets) != 3 || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(epoch) {
		t.Fatalf("child view %v", m)
	}
	for _, o := range offsets {
		if _, ok := o.(float64); !ok {
			t.Fatalf("attach offset %v is not an integer", o)
		}
	}
	p := decodeMap(t, r.do(t, "GET", "/v1/topics/rp", ""))
	if p["role"] != "parent" || !strings.Contains(rec.Body.String(), `"parent":"rp"`) {
		t.Fatalf("parent view %v", p)
	}
	if c, _ := p["children"].([]any); len(c) != 1 || c[0] != "rc" {
		t.Fatalf("parent's children %v", p["children"])
	}
}

// Ensure that a missing parent answers 404 and the child then GETs 404
// (conformance 35), and a refused attach answers 409 with nothing left
// behind (api.md §2.5).
func TestTopicCreateAsChildRefusedHTTP(t *testing.T) {
	t.Parallel()
	r := newTopicRig(t)
	want(t, r.do(t, "POST", "/v1/topics", `{"name":"c","parent":"nope"}`), http.StatusNotFound, errorBody("topic not found"))
	want(t, r.do(t, "GET", "/v1/topics/c", ""), http.StatusNotFound, errorBody("topic not found"))

	want(t, r.do(t, "POST", "/v1/topics", `{"name":"short","retention_ms":7200000}`), http.StatusCreated, "")
	rec := r.do(t, "POST", "/v1/topics", `{"name":"d","parent":"short","fanout_delay_ms":3600001}`)
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `"delay exceeds what the parent's retention can buffer`) {
		t.Fatalf("delay over retention: %d %s", rec.Code, rec.Body)
	}
	want(t, r.do(t, "GET", "/v1/topics/d", ""), http.StatusNotFound, errorBody("topic not found"))
}

package httpapi

import (
	"bytes"
	"net/http"
	"testing"
)

// FuzzTopicBodies ensures that no create, alter or redrive body makes the topic
// routes fail internally: every answer is a known client status with a JSON
// body, and a 2xx comes back only for exactly one JSON value (or, for a
// redrive, an empty body).
func FuzzTopicBodies(f *testing.F) {
	f.Add([]byte(`{"name":"t"}`))
	f.Add([]byte(`{"to":"base","rate_per_sec":5,"max_messages":3}`))
	allowed := map[int]bool{http.StatusOK: true, http.StatusCreated: true, http.StatusAccepted: true, http.StatusBadRequest: true, http.StatusNotFound: true,
		http.StatusConflict: true, http.StatusRequestEntityTooLarge: true, http.StatusNotImplemented: true}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := newTopicRig(t)
		if rec := r.do(t, "POST", "/v1/topics", `{"name":"base"}`); rec.Code != http.StatusCreated {
			t.Fatalf("setup: %d", rec.Code)
		}
		for _, route := range []struct{ method, path string }{{"POST", "/v1/topics"}, {"PATCH", "/v1/topics/base"},
			{"POST", "/v1/topics/base/redrive"}} {
			rec := r.do(t, route.method, route.path, string(body))
			if !allowed[rec.Code] {
				t.Fatalf("%s %s %q: %d %s", route.method, route.path, body, rec.Code, rec.Body.String())
			}
			var v any
			if rec.Code < 300 && len(body) > 0 && decodeTopicBody(bytes.NewReader(body), &v) != nil {
				t.Fatalf("%q answered %d but is not exactly one JSON value", body, rec.Code)
			}
		}
	})
}

package remotes_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/narad/narad/application/remotes"
)

// zstdRefuser answers a zstd-encoded request with status and error msg, and
// hands every other request to next.
type zstdRefuser struct {
	next   http.Handler
	status int
	msg    string
}

func (z zstdRefuser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Content-Encoding") != "zstd" {
		z.next.ServeHTTP(w, r)
		return
	}
	w.WriteHeader(z.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": z.msg})
}

// A dry run's capabilities (api.md §2.10.2): with an allowlist and this
// node's check passed, the compressed capability probe tells the
// messages a request may carry and whether the target decodes zstd; a
// target that refuses the compressed body keeps the cap this node's check
// learned and says zstd false; any other answer, no allowlist, a failed
// own check or a write (not a dry run) answers none.
func TestDryRunCapabilities(t *testing.T) {
	dryRun := remotes.AttachRequest{Parent: "orders", DryRun: true}
	cases := []struct {
		name      string
		allowlist bool
		legacy    bool
		refuse    *zstdRefuser
		req       remotes.AttachRequest
		fail      bool
		want      *remotes.Capabilities
	}{
		{name: "decodes zstd", allowlist: true, req: dryRun, want: &remotes.Capabilities{MaxMessages: 1000, Zstd: true}},
		{name: "older target decoding zstd", allowlist: true, legacy: true, req: dryRun, want: &remotes.Capabilities{MaxMessages: 100, Zstd: true}},
		{name: "415 to zstd", allowlist: true, refuse: &zstdRefuser{status: http.StatusUnsupportedMediaType, msg: "unsupported content encoding"},
			req: dryRun, want: &remotes.Capabilities{MaxMessages: 1000}},
		{name: "invalid json to zstd", allowlist: true, legacy: true, refuse: &zstdRefuser{status: http.StatusBadRequest, msg: "invalid json: bad"},
			req: dryRun, want: &remotes.Capabilities{MaxMessages: 100}},
		{name: "unavailable", allowlist: true, refuse: &zstdRefuser{status: http.StatusServiceUnavailable, msg: "draining"}, req: dryRun},
		{name: "no allowlist", req: dryRun},
		{name: "a write", allowlist: true, req: remotes.AttachRequest{Parent: "orders"}},
		{name: "own check failed", allowlist: true, req: dryRun, fail: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, true)
			f.transport.Allowlist = c.allowlist
			f.create(t, "dr")
			n := f.target(t)
			n.legacyBatch = c.legacy
			if c.refuse != nil {
				c.refuse.next = n
				f.transport.Serve(targetURL, *c.refuse)
			}
			r := f.remote(t, "dr")
			own := f.svc.CheckTarget(context.Background(), r, "orders", nil)
			if own.Result != remotes.ResultPass || own.Capable1000 == c.legacy {
				t.Fatalf("own check %+v", own)
			}
			if c.fail {
				own.Result, own.Class = remotes.ResultFail, "unreachable"
			}
			other := remotes.Report{Node: "n2", Result: remotes.ResultPass, Capable1000: !own.Capable1000}
			got := remotes.DryRunCapabilities(f.svc, context.Background(), c.req, r, []remotes.Report{other, own})
			switch {
			case (got == nil) != (c.want == nil):
				t.Fatalf("got %+v, want %+v", got, c.want)
			case got != nil && *got != *c.want:
				t.Fatalf("got %+v, want %+v", *got, *c.want)
			}
		})
	}
}

package remotes_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

func (f *fixture) target(t *testing.T) *narad {
	t.Helper()
	n := newNarad("Basic " + base64.StdEncoding.EncodeToString([]byte("replicator:"+testPassword)))
	f.transport.Serve(targetURL, n)
	return n
}

// Every check of internals.md §7.5 passes against a usable target, and
// each unusable target fails with its class.
func TestCheckTargetClasses(t *testing.T) {
	cases := []struct {
		name  string
		setup func(n *narad)
		class string
	}{
		{"usable", func(*narad) {}, ""},
		{"security off", func(n *narad) { n.secured = false }, "target_security_off"},
		{"admin credential", func(n *narad) { n.admin = true }, "admin_credential"},
		{"wrong password", func(n *narad) { n.auth = "Basic other" }, "auth_failed"},
		{"delay child", func(n *narad) { n.topic["fanout_delay_ms"] = 60000; n.topic["parent"] = "x" }, "target_is_delay_child"},
		{"stub", func(n *narad) { n.topic["remote"] = map[string]any{"name": "back"} }, "target_is_stub"},
		{"loop", func(n *narad) { n.children = []map[string]any{{"name": "c", "remote": map[string]any{"name": "x"}}} }, "target_has_remote_children"},
		{"no batch route", func(n *narad) { n.batchRoute = false }, "no_batch_produce"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, true)
			f.create(t, "dr")
			n := f.target(t)
			c.setup(n)
			rep := f.svc.CheckTarget(context.Background(), f.remote(t, "dr"), "orders", nil)
			if rep.Class != c.class || (c.class == "") != (rep.Result == remotes.ResultPass) {
				t.Fatalf("report %+v, want class %q", rep, c.class)
			}
		})
	}
}

// The probe tells a 1,000-message target from a 100-message one.
func TestCheckTargetProbesTheBatchCap(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	n := f.target(t)
	if rep := f.svc.CheckTarget(context.Background(), f.remote(t, "dr"), "orders", nil); !rep.Capable1000 || rep.TargetID != "00000000000000aa" {
		t.Fatalf("capable: %+v", rep)
	}
	n.legacyBatch = true
	if rep := f.svc.CheckTarget(context.Background(), f.remote(t, "dr"), "orders", nil); rep.Capable1000 || rep.Result != remotes.ResultPass {
		t.Fatalf("legacy: %+v", rep)
	}
}

// With a source, the target must not be the source and must carry its
// schema.
func TestCheckTargetComparesWithTheSource(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	n := f.target(t)
	source := meta.Topic{Name: "orders", ID: "00000000000000aa"}
	if rep := f.svc.CheckTarget(context.Background(), f.remote(t, "dr"), "orders", &source); rep.Class != "target_is_source" {
		t.Fatalf("same id: %+v", rep)
	}
	source.ID = "00000000000000bb"
	n.topic["schema"] = map[string]any{"type": "object"}
	if rep := f.svc.CheckTarget(context.Background(), f.remote(t, "dr"), "orders", &source); rep.Class != "schema_mismatch" {
		t.Fatalf("schema: %+v", rep)
	}
}

// Conformance 246 (the use case): a test is a verdict; a second one within
// 5 s is refused with a retry delay.
func TestTestIsRateLimitedPerRemote(t *testing.T) {
	f := newFixture(t, true)
	f.create(t, "dr")
	f.target(t)
	ctx := context.Background()
	if _, err := f.svc.Test(ctx, admin, "dr", remotes.TestRequest{}); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("no topic: %v", err)
	}
	out, err := f.svc.Test(ctx, admin, "dr", remotes.TestRequest{Topic: "orders"})
	if err != nil || out.Result != remotes.ResultPass || out.Remote != "dr" || len(out.Checks) != 1 {
		t.Fatalf("test: %v %+v", err, out)
	}
	if _, err := f.svc.Test(ctx, admin, "dr", remotes.TestRequest{Topic: "orders"}); !errors.Is(err, domain.ErrRateLimited) {
		t.Fatalf("repeat: %v", err)
	}
	f.clock.Advance(5 * time.Second)
	out, err = f.svc.Test(ctx, admin, "dr", remotes.TestRequest{Topic: "missing"})
	if err != nil || out.Result != remotes.ResultFail || out.Class != "target_missing" {
		t.Fatalf("missing topic: %v %+v", err, out)
	}
	if _, err := f.svc.Test(ctx, admin, "ghost", remotes.TestRequest{Topic: "orders"}); !errors.Is(err, domain.ErrRemoteNotFound) {
		t.Fatalf("ghost: %v", err)
	}
}

package shipping_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain/meta"
)

// ready runs Ready in the background and returns its result channel.
func ready(f *fixture, ctx context.Context) chan error {
	done := make(chan error, 1)
	go func() { done <- f.shipper.Ready(ctx, f.cursor) }()
	return done
}

// A paused link waits in state paused without reading, and goes on once
// resumed.
func TestReadyWaitsWhilePaused(t *testing.T) {
	f := newFixture(t, 1, 1<<20)
	f.propose(t, &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: stubID, Op: meta.RemoteOpPause, Reason: "maintenance"})
	done := ready(f, context.Background())
	waitFor(t, func() bool { return f.state(t).State == "paused" })
	f.propose(t, &meta.SetRemoteChildState{Parent: "orders", Child: "orders-dr", ChildID: stubID, Op: meta.RemoteOpResume})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A remote deleted with force leaves its links in remote_missing.
func TestReadyReportsARemoteMissing(t *testing.T) {
	f := newFixture(t, 1, 1<<20)
	if err := f.svc.Delete(context.Background(), admin, "dr", true); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := ready(f, ctx)
	waitFor(t, func() bool { return f.state(t).State == "remote_missing" })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ready: %v", err)
	}
}

// The runtime check stops a link whose target was recreated (another id),
// and one whose target grew a remote child (the loop rule).
func TestReadyStallsOnTheTargetChecks(t *testing.T) {
	for name, change := range map[string]func(tg *target){
		"target_replaced": func(tg *target) { tg.id = "00000000000000ff" },
		"target_has_remote_children": func(tg *target) {
			tg.children = []map[string]any{{"name": "x", "remote": map[string]any{"name": "back"}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, 1, 1<<20)
			f.target.mu.Lock()
			change(f.target)
			f.target.mu.Unlock()
			ctx, cancel := context.WithCancel(context.Background())
			done := ready(f, ctx)
			waitFor(t, func() bool { return f.state(t).State == name })
			cancel()
			<-done
		})
	}
}

// A wrong password closes the remote's gate (auth_failed); a new password
// opens it at once and the records go.
func TestAuthFailureClosesTheGateUntilANewPassword(t *testing.T) {
	f := newFixture(t, 1, 1<<20)
	ship(t, f, records(0, 3, 1)) // the first check and probe pass
	f.target.mu.Lock()
	f.target.auth = "Basic rotated"
	f.target.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.shipper.Ship(ctx, f.cursor, records(3, 3, 1)) }()
	waitFor(t, func() bool { return f.state(t).State == "auth_failed" })
	if rs := f.shipper.Remotes(); len(rs) != 1 || rs[0].GateBackoff == 0 {
		t.Fatalf("a closed gate reports no backoff: %+v", rs)
	}
	f.target.mu.Lock()
	f.target.auth = "Basic " + b64("replicator:"+password+"-new")
	f.target.mu.Unlock()
	if _, err := f.svc.Update(context.Background(), admin, "dr", updatePassword(password+"-new")); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(f.target.all()); n != 6 || f.metrics.get("failed auth_failed") == 0 {
		t.Fatalf("stored %d, auth failures %d", n, f.metrics.get("failed auth_failed"))
	}
}

// A lane that must wait and cannot hold its records in the budget ends the
// slab with ErrReread; the slab read again sends only what the target
// lacks.
func TestShipRereadsWhenTheBudgetIsFull(t *testing.T) {
	f := newFixture(t, 1, 0)
	recs := records(0, 10, 1)
	fail := true
	f.target.script = func(msgs []message) (int, string) {
		if fail && len(msgs) > 5 {
			return 413, `{"error":"request body too large"}`
		}
		return 0, ""
	}
	ctx := context.Background()
	if err := f.shipper.Ready(ctx, f.cursor); err != nil {
		t.Fatal(err)
	}
	if err := f.shipper.Ship(ctx, f.cursor, recs); err != nil {
		t.Fatalf("halving needs no wait: %v", err)
	}
	f.target.script = func([]message) (int, string) { return 503, "down" }
	err := f.shipper.Ship(ctx, f.cursor, records(10, 4, 1))
	if !errors.Is(err, fanout.ErrReread) || f.metrics.get("reread") != 1 {
		t.Fatalf("err %v rereads %d", err, f.metrics.get("reread"))
	}
	f.target.script = nil
	if err := f.shipper.Ship(ctx, f.cursor, records(10, 4, 1)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.target.all()); n != 14 {
		t.Fatalf("stored %d, want 14", n)
	}
}

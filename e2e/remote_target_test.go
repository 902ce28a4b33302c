package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRemoteTargetReplaced deletes B's "orders" while the link runs and
// creates it again. The link stops, target_missing or target_replaced,
// while A keeps answering 202 (api.md §5.8); a resume without
// accept_target is refused as target_replaced, one with it records the new
// target ID (api.md §2.12.1), and every record produced since the delete
// reaches the new target.
func TestRemoteTargetReplaced(t *testing.T) {
	p := startRemotePair(t)
	l, kp := newShipLedger(), newKeyedProducer(100, 4)
	p.attach(t, "attach", 2)
	c := l.collect(t, p.bClients)
	kp.produceAll(t, p.aClient, l, 2_000)
	p.settle(t, l, c, 2*time.Minute)
	c.stop()
	old := p.targetID(t)

	asAdmin(t, p.b[0], "DELETE", "/v1/topics/"+remoteTopic, "").want(t, "delete B's orders", 204, "")
	for _, n := range p.b {
		deadline := time.Now().Add(30 * time.Second)
		for asAdmin(t, n, "GET", "/v1/topics/"+remoteTopic, "").status != http.StatusNotFound {
			if time.Now().After(deadline) {
				t.Fatalf("B node %s still serves orders 30 s after its delete", n.url)
			}
			time.Sleep(50 * time.Millisecond) // polling B's metadata, bounded by the deadline
		}
	}
	kp.produceAll(t, p.aClient, l, 2_000)
	row := p.waitChild(t, p.a[1], "the link stops on the missing target", time.Minute, func(r remoteChildRow) bool {
		return r.State == "target_missing" || r.State == "target_replaced"
	})
	t.Logf("target deleted: the listing says %s, lag %d", row.State, row.LagMessages)

	p.createTarget(t)
	recreated := p.targetID(t)
	if recreated == old {
		t.Fatalf("B's recreated orders kept ID %s", old)
	}
	c = l.collect(t, p.bClients)
	a := p.childRoute(t, p.a[0], "resume", `{}`)
	skipWithoutRemoteChildren(t, "resume", a)
	if a.status != http.StatusConflict || !strings.Contains(a.body, "target_replaced") {
		t.Fatalf("resume without accept_target on a recreated target: %d %s, want 409 target_replaced", a.status, a.body)
	}
	a = p.childRoute(t, p.a[0], "resume", `{"accept_target":true}`)
	a.want(t, "resume accepting the new target", 200, "")
	var stub struct {
		Remote struct {
			TargetID string `json:"target_id"`
		} `json:"remote"`
	}
	if json.Unmarshal([]byte(a.body), &stub) != nil || stub.Remote.TargetID != recreated {
		t.Fatalf("resume answer %s, want remote.target_id %s", a.body, recreated)
	}
	resumed := time.Now()
	kp.produceAll(t, p.aClient, l, 2_000)
	p.settle(t, l, c, 2*time.Minute)
	t.Logf("every record on the new target %s after the resume", time.Since(resumed).Round(time.Millisecond))
	p.waitRunning(t, time.Minute)
	checkOrder(t, l)
}

// targetID is the incarnation ID of B's "orders" (api.md §2.4).
func (p *remotePair) targetID(t *testing.T) string {
	t.Helper()
	tp, err := p.bClients[0].Topic(t.Context(), remoteTopic)
	if err != nil {
		t.Fatalf("describe B's orders: %v", err)
	}
	if tp.ID == "" {
		t.Fatal("B's orders has no ID")
	}
	return tp.ID
}

// TestRemoteCredentialsRotated changes the replicator's password on B: the
// link stalls in auth_failed (api.md §5.8), A keeps answering 202, and a
// PATCH of the remote's password on A lets it ship again without a
// restart (api.md §2.18). No answer repeats either password.
func TestRemoteCredentialsRotated(t *testing.T) {
	p := startRemotePair(t)
	l, kp := newShipLedger(), newKeyedProducer(100, 5)
	p.attach(t, "attach", 4)
	c := l.collect(t, p.bClients)
	kp.produceAll(t, p.aClient, l, 2_000)
	p.settle(t, l, c, 2*time.Minute)

	rotated := "rotated-" + newClusterSecret(t)[:24]
	asAdmin(t, p.b[0], "PUT", "/v1/users/"+replicatorID+"/password", fmt.Sprintf(`{"new_password":%q}`, rotated)).
		want(t, "change the replicator's password on B", 204, "")
	kp.produceAll(t, p.aClient, l, 2_000)
	row := p.waitChild(t, p.a[1], "the link stalls on the old password", time.Minute, func(r remoteChildRow) bool {
		return r.State == "auth_failed" && r.LagMessages > 0
	})
	t.Logf("password rotated on B: the listing says %s, lag %d", row.State, row.LagMessages)

	patched := asAdmin(t, p.a[2], "PATCH", "/v1/remotes/"+remoteName, fmt.Sprintf(`{"password":%q}`, rotated))
	patched.want(t, "give A the new password", 200, "")
	fixed := time.Now()
	kp.produceAll(t, p.aClient, l, 2_000)
	p.settle(t, l, c, 2*time.Minute)
	t.Logf("every record on B %s after the new password", time.Since(fixed).Round(time.Millisecond))
	row = p.waitRunning(t, time.Minute)
	got := asAdmin(t, p.a[0], "GET", "/v1/remotes/"+remoteName, "")
	for _, body := range []string{patched.body, got.body, row.raw} {
		if strings.Contains(body, rotated) || strings.Contains(body, p.replicatorPW) {
			t.Fatalf("an answer repeats a password: %s", body)
		}
	}
	checkOrder(t, l)
}

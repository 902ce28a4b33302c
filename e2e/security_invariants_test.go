package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// invariantNode is a secured node with a non-root admin "ops" and a plain
// user "erin" (produce on orders-*).
func invariantNode(t *testing.T) *node {
	t.Helper()
	n := startSecured(t, rootPassword)
	call(t, n.url, "admin", rootPassword, "POST", "/v1/users", `{"username":"ops","password":"ops-pw","grants":[{"action":"admin"}]}`).want(t, "create ops", 201, "")
	call(t, n.url, "admin", rootPassword, "POST", "/v1/users", `{"username":"erin","password":"erin-pw","grants":[{"action":"produce","patterns":["orders-*"]}]}`).want(t, "create erin", 201, "")
	return n
}

// ensure that only root confers admin: a non-root admin granting it, by
// create or by grants replacement, gets 403 and nothing changes
// (invariant 1, conformance 133).
func TestInvariantNoEscalationThroughGrants(t *testing.T) {
	n := invariantNode(t)
	call(t, n.url, "ops", "ops-pw", "POST", "/v1/users", `{"username":"x","password":"pw","grants":[{"action":"admin"}]}`).
		want(t, "ops creates an admin", 403, "cannot grant permissions you do not hold")
	call(t, n.url, "admin", rootPassword, "GET", "/v1/users/x", "").want(t, "x was not created", 404, "not found")
	call(t, n.url, "ops", "ops-pw", "PUT", "/v1/users/erin/grants", `{"grants":[{"action":"admin"}]}`).
		want(t, "ops makes erin admin", 403, "cannot grant permissions you do not hold")
	call(t, n.url, "erin", "erin-pw", "GET", "/v1/users", "").want(t, "erin stays non-admin", 403, "admin privileges required")
	call(t, n.url, "ops", "ops-pw", "PUT", "/v1/users/erin/grants", `{"grants":[{"action":"consume","patterns":["orders-*"]}]}`).
		want(t, "ops confers a scoped grant", 200, "")
	call(t, n.url, "admin", rootPassword, "POST", "/v1/users", `{"username":"y","password":"pw","grants":[{"action":"admin"}]}`).
		want(t, "root creates an admin", 201, "")
}

// ensure that nobody edits their own grants, root included (invariant 2).
func TestInvariantNoOwnGrants(t *testing.T) {
	n := invariantNode(t)
	call(t, n.url, "ops", "ops-pw", "PUT", "/v1/users/ops/grants", `{"grants":[]}`).want(t, "ops edits itself", 403, "cannot modify your own grants")
	call(t, n.url, "admin", rootPassword, "PUT", "/v1/users/admin/grants", `{"grants":[]}`).want(t, "root edits itself", 403, "cannot modify your own grants")
}

// ensure that root cannot be deleted, demoted or re-passworded by another
// admin, and that nobody deletes their own account (invariants 3, 4,
// conformance 138, 139, 141).
func TestInvariantRootProtected(t *testing.T) {
	n := invariantNode(t)
	call(t, n.url, "ops", "ops-pw", "DELETE", "/v1/users/admin", "").want(t, "ops deletes root", 403, "the root admin cannot be deleted")
	call(t, n.url, "ops", "ops-pw", "PUT", "/v1/users/admin/grants", `{"grants":[{"action":"consume","patterns":["x"]}]}`).
		want(t, "ops demotes root", 403, "the root admin's grants are immutable")
	call(t, n.url, "ops", "ops-pw", "PUT", "/v1/users/admin/password", `{"new_password":"taken"}`).
		want(t, "ops resets root's password", 403, "only the root admin may change the root password")
	call(t, n.url, "admin", rootPassword, "GET", "/v1/topics", "").want(t, "root still signs in", 200, "")
	call(t, n.url, "ops", "ops-pw", "DELETE", "/v1/users/ops", "").want(t, "ops deletes itself", 403, "cannot delete your own account")
	call(t, n.url, "admin", rootPassword, "PUT", "/v1/users/admin/password", `{"new_password":"root-2"}`).want(t, "root changes its own", 204, "")
	waitSignIn(t, n.url, "admin", "root-2")
}

// ensure that a non-admin changes their own password only with the right
// current one, grants untouched (invariant 6, conformance 140).
func TestInvariantSelfServicePassword(t *testing.T) {
	n := invariantNode(t)
	call(t, n.url, "erin", "erin-pw", "PUT", "/v1/users/erin/password", `{"new_password":"n2","current_password":"nope"}`).
		want(t, "wrong current", 403, "current password is incorrect")
	call(t, n.url, "erin", "erin-pw", "PUT", "/v1/users/ops/password", `{"new_password":"n2","current_password":"erin-pw"}`).
		want(t, "another's", 403, "admin required")
	call(t, n.url, "erin", "erin-pw", "PUT", "/v1/users/erin/password", `{"new_password":"erin-2","current_password":"erin-pw"}`).
		want(t, "right current", 204, "")
	waitSignIn(t, n.url, "erin", "erin-2")
	call(t, n.url, "erin", "erin-pw", "GET", "/v1/topics", "").want(t, "old password", 401, "")
	a := call(t, n.url, "admin", rootPassword, "GET", "/v1/users/erin", "")
	a.want(t, "erin read back", 200, "")
	if want := `"grants":[{"action":"produce","patterns":["orders-*"]}]`; !contains(a.body, want) {
		t.Fatalf("grants changed by a password change: %s", a.body)
	}
}

// ensure that a user acts on another owner's topic only as the spec
// allows: no alter, delete or attach of the admin's topic, while its own
// produce grant still works (conformance 142, 63, 67, 83).
func TestInvariantOtherOwnersTopic(t *testing.T) {
	n := invariantNode(t)
	call(t, n.url, "admin", rootPassword, "POST", "/v1/topics", `{"name":"orders-eu"}`).want(t, "root creates", 201, "")
	call(t, n.url, "erin", "erin-pw", "POST", "/v1/topics/orders-eu/produce", "m").want(t, "erin produces", 202, "")
	call(t, n.url, "erin", "erin-pw", "GET", "/v1/topics/orders-eu/consume", "").want(t, "erin consumes", 403, "consume not allowed on this topic")
	call(t, n.url, "erin", "erin-pw", "DELETE", "/v1/topics/orders-eu", "").want(t, "erin deletes", 403, "only the topic owner or an admin may modify this topic")
	call(t, n.url, "erin", "erin-pw", "PATCH", "/v1/topics/orders-eu", `{"retention_ms":0}`).want(t, "erin alters", 403, "only the topic owner or an admin may modify this topic")
	call(t, n.url, "erin", "erin-pw", "POST", "/v1/topics", `{"name":"orders-x","owner":"erin"}`).want(t, "erin creates", 403, "create not allowed on this topic")
	call(t, n.url, "admin", rootPassword, "POST", "/v1/users", `{"username":"kim","password":"kim-pw","grants":[{"action":"create","patterns":["kim-*"]}]}`).want(t, "create kim", 201, "")
	a := call(t, n.url, "kim", "kim-pw", "POST", "/v1/topics", `{"name":"kim-1","owner":"mallory"}`)
	a.want(t, "kim creates", 201, "")
	if !contains(a.body, `"owner":"kim"`) {
		t.Fatalf("a client-supplied owner was kept: %s", a.body)
	}
}

// ensure that an unknown username and a wrong password for a real one take
// about as long to refuse, so a timing probe does not tell which names
// exist (each attempt with a fresh password, so no cache answers).
func TestUnknownUserCostsLikeWrongPassword(t *testing.T) {
	n := invariantNode(t)
	median := func(user string) time.Duration {
		var ds []time.Duration
		for i := range 4 { // under the 5-attempt throttle of a real user
			began := time.Now()
			call(t, n.url, user, fmt.Sprintf("fresh-%s-%d", user, i), "GET", "/v1/topics", "").want(t, user, 401, "")
			ds = append(ds, time.Since(began))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	known, unknown := median("erin"), median("nobody-here")
	ratio := float64(unknown) / float64(known)
	t.Logf("wrong password %s, unknown user %s (ratio %.2f)", known, unknown, ratio)
	if ratio < 0.5 || ratio > 2 {
		t.Fatalf("unknown user answered in %s, a wrong password in %s: a timing probe tells them apart", unknown, known)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

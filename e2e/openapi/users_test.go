package openapi

import (
	"strconv"
	"testing"
)

// Users the access tests sign in as.
var (
	reader = &cred{"reader", "reader-password"}
	nobody = &cred{"nobody", "nobody-password"}
)

func (cl *client) users(t *testing.T) {
	grants := []obj{{"action": "consume", "patterns": []string{"work*"}}, {"action": "produce", "patterns": []string{"work"}}}
	cl.do(t, js("POST", "/v1/users", root, obj{"username": reader.user, "password": reader.pass, "grants": grants}), 201)
	cl.do(t, js("POST", "/v1/users", root, obj{"username": nobody.user, "password": "first-password"}), 201)
	cl.do(t, js("POST", "/v1/users", root, obj{"username": "temp", "password": "temp-password"}), 201)
	cl.do(t, js("POST", "/v1/users", root, obj{"username": reader.user, "password": "x"}), 409).wantError(t, "already exists")
	cl.do(t, bad(js("POST", "/v1/users", root, obj{"username": "a b", "password": "x"})), 400)
	cl.do(t, bad(js("POST", "/v1/users", root, obj{"username": "g", "password": "x", "grants": []obj{{"action": "produce"}}})), 400).
		wantError(t, "requires at least one topic pattern")

	var users []struct {
		Username string `json:"username"`
		Root     bool   `json:"root"`
	}
	cl.do(t, get("/v1/users", root), 200).decode(t, &users)
	if len(users) != 4 || users[0].Username != rootUser || !users[0].Root {
		t.Errorf("users: %+v", users)
	}
	cl.do(t, get("/v1/users/"+reader.user, root), 200)
	cl.do(t, get("/v1/users/nosuch", root), 404).wantError(t, "not found")

	grants = append(grants, obj{"action": "create", "patterns": []string{"reader-*"}})
	cl.do(t, js("PUT", "/v1/users/reader/grants", root, obj{"grants": grants}), 200)
	cl.do(t, js("PUT", "/v1/users/temp/grants", root, obj{"grants": []obj{{"action": "admin"}}}), 200)
	cl.do(t, js("PUT", "/v1/users/temp/grants", root, obj{"grants": []obj{}}), 200)
	cl.do(t, bad(js("PUT", "/v1/users/reader/grants", root, obj{})), 400).wantError(t, "grants required")
	cl.do(t, js("PUT", "/v1/users/nosuch/grants", root, obj{"grants": []obj{}}), 404)
	cl.do(t, js("PUT", "/v1/users/admin/grants", root, obj{"grants": []obj{}}), 403)

	self := obj{"new_password": nobody.pass, "current_password": "first-password"}
	cl.do(t, js("PUT", "/v1/users/nobody/password", &cred{nobody.user, "first-password"}, self), 204)
	cl.do(t, js("PUT", "/v1/users/nobody/password", nobody, obj{"new_password": "other", "current_password": "wrong"}), 403).
		wantError(t, "current password is incorrect")
	cl.do(t, js("PUT", "/v1/users/temp/password", root, obj{"new_password": "temp-password-2"}), 204)
	cl.do(t, bad(js("PUT", "/v1/users/temp/password", root, obj{})), 400).wantError(t, "new_password required")
	cl.do(t, js("PUT", "/v1/users/nosuch/password", root, obj{"new_password": "x"}), 404)

	cl.do(t, del("/v1/users/temp", root), 204)
	cl.do(t, del("/v1/users/temp", root), 404)
	cl.do(t, del("/v1/users/admin", root), 403)
}

// access signs in as users with few or no grants (created by users).
func (cl *client) access(t *testing.T) {
	cl.do(t, bad(get("/v1/topics", nil)), 401).wantError(t, "authentication required")
	cl.do(t, get("/v1/topics", &cred{nobody.user, "wrong-password"}), 401)
	cl.do(t, bad(get("/v1/cluster/members", nil)), 401)

	var page struct {
		Topics []topicView `json:"topics"`
	}
	cl.do(t, get("/v1/topics", reader), 200).decode(t, &page)
	if len(page.Topics) != 1 || page.Topics[0].Name != "work" {
		t.Errorf("reader lists %+v, want only work", page.Topics)
	}
	cl.do(t, get("/v1/topics/work", reader), 200)
	cl.do(t, js("POST", "/v1/topics/work/produce/batch", reader, obj{"messages": []obj{{"payload": "hi"}}}), 202)
	cl.do(t, js("PATCH", "/v1/topics/work", reader, obj{"retention_ms": 0}), 403)
	cl.do(t, js("POST", "/v1/topics", reader, obj{"name": "reader-own"}), 201)
	cl.do(t, js("POST", "/v1/topics", reader, obj{"name": "not-mine"}), 403).wantError(t, "create not allowed")

	cl.do(t, get("/v1/topics/work", nobody), 403).wantError(t, "no grant on this topic")
	cl.do(t, get("/v1/topics/work/schema", nobody), 403)
	cl.do(t, get("/v1/topics/work/children", nobody), 403)
	cl.do(t, raw("/v1/topics/work/produce", "application/json", "{}"), 202)
	p := raw("/v1/topics/work/produce", "application/json", "{}")
	p.as = nobody
	cl.do(t, p, 403).wantError(t, "produce not allowed")
	cl.do(t, get("/v1/topics/work/consume", nobody), 403).wantError(t, "consume not allowed")
	cl.do(t, call{method: "POST", path: "/v1/topics/work/ack?receipt_handle=0:0:1", as: nobody, contentType: "application/json"}, 403)
	cl.do(t, del("/v1/topics/work", nobody), 403)
	cl.do(t, get("/v1/users", nobody), 403).wantError(t, "admin privileges required")
	cl.do(t, get("/v1/users/reader", nobody), 403)
	cl.do(t, get("/v1/cluster/members", nobody), 403).wantError(t, "admin privileges required")
	cl.do(t, get("/v1/cluster/moves", nobody), 403)
	cl.do(t, get("/v1/cluster/events", nobody), 403)
}

func (cl *client) cluster(t *testing.T) {
	var members struct {
		Members []struct {
			ID     string `json:"id"`
			Leader bool   `json:"leader"`
		} `json:"members"`
	}
	cl.do(t, get("/v1/cluster/members", root), 200).decode(t, &members)
	if len(members.Members) != 1 || !members.Members[0].Leader {
		t.Fatalf("members: %+v", members)
	}
	id := members.Members[0].ID
	cl.do(t, get("/v1/cluster/members?detail=true", root), 200)
	cl.do(t, bad(get("/v1/cluster/members?detail=maybe", root)), 400)
	cl.do(t, get("/v1/cluster/moves", root), 200)
	cl.do(t, get("/v1/cluster/moves?detail=true", root), 200)

	var events struct {
		Events     []struct{ Seq uint64 } `json:"events"`
		NextBefore uint64                 `json:"next_before"`
	}
	cl.do(t, get("/v1/cluster/events?limit=2", root), 200).decode(t, &events)
	if len(events.Events) != 2 || events.NextBefore == 0 {
		t.Errorf("events page: %+v", events)
	}
	cl.do(t, get("/v1/cluster/events?heartbeats=true&before="+strconv.FormatUint(events.NextBefore, 10), root), 200)
	cl.do(t, bad(get("/v1/cluster/events?limit=0", root)), 400)

	dec := "/v1/cluster/members/" + id + "/decommission"
	var verdict struct {
		Member string `json:"member"`
		Would  bool   `json:"would_decommission"`
	}
	cl.do(t, withClient(call{method: "POST", path: dec + "?dry_run=true", as: root}), 200).decode(t, &verdict)
	if verdict.Member != id || verdict.Would {
		t.Errorf("dry run: %+v", verdict)
	}
	cl.do(t, withClient(call{method: "POST", path: dec, as: root}), 409).wantError(t, "cannot be decommissioned")
	cl.do(t, bad(withClient(call{method: "POST", path: dec + "?dry_run=maybe", as: root})), 400)
	cl.do(t, withClient(call{method: "POST", path: "/v1/cluster/members/nosuch/decommission", as: root}), 404)
	cl.do(t, del(dec, root), 204)
	cl.do(t, del(dec+"?dry_run=true", root), 400)
	cl.do(t, del("/v1/cluster/members/nosuch/decommission", root), 404)

	cl.do(t, withClient(call{method: "POST", path: "/v1/cluster/members/nosuch/forget", as: root}), 404)
	cl.do(t, withClient(call{method: "POST", path: "/v1/cluster/members/" + id + "/forget", as: root}), 400).wantError(t, "leader")

	cl.do(t, withClient(call{method: "POST", path: "/v1/cluster/moves/work/0/abort", as: root}), 409).wantError(t, "no move in flight")
	cl.do(t, withClient(call{method: "POST", path: "/v1/cluster/moves/nosuch/0/abort?target=" + id, as: root}), 404)
	cl.do(t, bad(withClient(call{method: "POST", path: "/v1/cluster/moves/work/x/abort", as: root})), 400)
}

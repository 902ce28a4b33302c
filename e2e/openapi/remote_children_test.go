package openapi

import (
	"strings"
	"testing"
)

// The remote child the tests create under its parent, on remote target.
const (
	mirrorParent = "mirror-src"
	mirrorChild  = "mirror"
	mirrorRoute  = "/v1/topics/" + mirrorParent + "/children/" + mirrorChild
)

// stubView is what the tests read of a remote child's stub.
type stubView struct {
	topicView
	Remote *struct {
		Name        string `json:"name"`
		Topic       string `json:"topic"`
		TargetID    string `json:"target_id"`
		Paused      bool   `json:"paused"`
		PauseReason string `json:"pause_reason"`
		PausedBy    string `json:"paused_by"`
		CreatedBy   string `json:"created_by"`
	} `json:"remote"`
	Warnings []string `json:"warnings"`
}

// remoteChildren creates a remote child on the fake target and drives it
// through the listing, pause, skip, the unshipped check, resume and the
// removal (api.md §2.10.2, §2.11, §2.12, §2.12.1). It runs after remotes,
// which registered dead, probe and target.
func (cl *client) remoteChildren(rs remotesSetup) func(*testing.T) {
	return func(t *testing.T) {
		cl.createTopic(t, obj{"name": mirrorParent, "retention_ms": 86400000})
		const attach = "/v1/topics/" + mirrorParent + "/children"
		cl.remoteChildRefusals(t, attach)

		var failed struct {
			Error  string `json:"error"`
			Class  string `json:"class"`
			Checks []obj  `json:"checks"`
		}
		dead := obj{"child": "mirror-dead", "remote": "dead", "dry_run": true}
		cl.doAny(t, js("POST", attach, root, dead), 409, 412, 502, 503).decode(t, &failed)
		if failed.Class == "" || len(failed.Checks) != 1 {
			t.Errorf("a failing check: %+v", failed)
		}

		var dry struct {
			DryRun  bool  `json:"dry_run"`
			Offsets []int `json:"attach_offsets"`
			Checks  []struct {
				Result string `json:"result"`
			} `json:"checks"`
		}
		probe := obj{"child": mirrorChild, "remote": "probe", "remote_topic": "orders-copy", "from": "earliest", "lanes": 2, "dry_run": true}
		cl.do(t, js("POST", attach, root, probe), 200).decode(t, &dry)
		if !dry.DryRun || len(dry.Offsets) == 0 || len(dry.Checks) != 1 || dry.Checks[0].Result != "pass" {
			t.Errorf("dry run: %+v", dry)
		}

		var stub stubView
		create := js("POST", attach, root, obj{"child": mirrorChild, "remote": "target", "remote_topic": "orders-copy"})
		a := cl.do(t, create, 201)
		a.decode(t, &stub)
		if stub.Role != "child" || stub.Partitions != 0 || stub.Remote == nil || stub.Remote.Name != "target" ||
			stub.Remote.TargetID != targetTopicID || stub.Remote.CreatedBy != rootUser || len(stub.Warnings) == 0 {
			t.Fatalf("create answer: %s", a.body)
		}
		cl.do(t, create, 409).wantError(t, "already exists")
		cl.do(t, get("/v1/topics/"+mirrorChild, root), 200)
		cl.do(t, raw("/v1/topics/"+mirrorChild+"/produce", "application/json", "{}"), 409).wantError(t, "lives on remote")

		cl.listRemoteChild(t)
		var inUse struct {
			Links []string `json:"links"`
		}
		cl.do(t, del("/v1/remotes/target", root), 409).decode(t, &inUse)
		if len(inUse.Links) != 1 || inUse.Links[0] != mirrorParent+"/"+mirrorChild {
			t.Errorf("delete of a remote in use: %+v", inUse)
		}

		a = cl.do(t, js("POST", mirrorRoute+"/pause", root, obj{"reason": "openapi e2e"}), 200)
		a.wantNoStore(t)
		a.decode(t, &stub)
		if !stub.Remote.Paused || stub.Remote.PauseReason != "openapi e2e" || stub.Remote.PausedBy != rootUser {
			t.Errorf("pause answer: %s", a.body)
		}
		cl.do(t, withClient(call{method: "POST", path: mirrorRoute + "/pause", as: root}), 200)

		var skip struct {
			Error     string `json:"error"`
			BlockedAt *obj   `json:"blocked_at"`
		}
		a = cl.do(t, js("POST", mirrorRoute+"/skip", root, obj{"partition": 0, "offset": 0}), 409)
		a.decode(t, &skip)
		if !strings.Contains(skip.Error, "not stuck") || skip.BlockedAt != nil {
			t.Errorf("skip of a link that is not stuck: %s", a.body)
		}

		// Nothing reaches the target while it holds: the removal finds the
		// record left to ship.
		rs.target.hold(true)
		cl.do(t, raw("/v1/topics/"+mirrorParent+"/produce", "application/json", `{"n":1}`), 202)
		var left struct {
			LagMessages int64            `json:"lag_messages"`
			LagComplete bool             `json:"lag_complete"`
			Backlog     map[string]int64 `json:"dispatch_backlog"`
		}
		cl.do(t, del(mirrorRoute, root), 409).decode(t, &left)
		backlog := int64(0)
		for _, n := range left.Backlog {
			backlog += n
		}
		if left.LagMessages == 0 && left.LagComplete && backlog == 0 {
			t.Errorf("unshipped refusal without anything left: %+v", left)
		}

		var resumed stubView
		a = cl.doPaced(t, js("POST", mirrorRoute+"/resume", root, obj{"accept_target": false}), 200)
		a.decode(t, &resumed)
		if resumed.Remote == nil || resumed.Remote.Paused || resumed.Remote.TargetID != targetTopicID {
			t.Errorf("resume answer: %s", a.body)
		}
		rs.target.hold(false)

		cl.doPaced(t, del("/v1/topics/"+mirrorParent+"?force=true", root), 204)
		cl.do(t, del(mirrorRoute, root), 404)
		cl.do(t, del("/v1/remotes/target", root), 204)
	}
}

// remoteChildRefusals are the remote-child answers that write nothing.
func (cl *client) remoteChildRefusals(t *testing.T, attach string) {
	cl.do(t, bad(js("POST", attach, root, obj{"child": mirrorChild, "dry_run": true})), 400).wantError(t, "need remote")
	cl.do(t, js("POST", attach, root, obj{"child": mirrorChild, "remote": "nosuch"}), 400).wantError(t, "not registered")
	cl.do(t, bad(js("POST", attach, root, obj{"child": mirrorChild, "remote": "target", "lanes": 9})), 400).wantError(t, "lanes")
	cl.do(t, js("POST", attach, reader, obj{"child": mirrorChild, "remote": "target"}), 403).wantError(t, "admin privileges required")
	cl.do(t, js("POST", "/v1/topics/nosuch/children", root, obj{"child": mirrorChild, "remote": "target"}), 404)

	for _, verb := range []string{"pause", "resume", "skip"} {
		body := obj{}
		if verb == "skip" {
			body = obj{"partition": 0, "offset": 0}
		}
		a := cl.do(t, js("POST", mirrorRoute+"/"+verb, root, body), 404)
		a.wantError(t, "topic not found")
		a.wantNoStore(t)
		cl.do(t, js("POST", mirrorRoute+"/"+verb, reader, body), 403)
	}
	cl.do(t, bad(js("POST", mirrorRoute+"/pause", root, obj{"reason": strings.Repeat("r", 300)})), 400).wantError(t, "reason")
	cl.do(t, bad(js("POST", mirrorRoute+"/resume", root, obj{"accept_target": "yes"})), 400).wantError(t, "invalid json")
	cl.do(t, bad(js("POST", mirrorRoute+"/skip", root, obj{"partition": 0})), 400).wantError(t, "partition and offset")
	cl.do(t, bad(call{method: "POST", path: mirrorRoute + "/skip", as: root, body: []byte("{}")}), 415)
}

// listRemoteChild reads the parent's children with the link fields and
// the per-partition rows.
func (cl *client) listRemoteChild(t *testing.T) {
	var list struct {
		Children []struct {
			Name       string `json:"name"`
			Remote     *obj   `json:"remote"`
			State      string `json:"state"`
			Partitions []struct {
				Partition int    `json:"partition"`
				State     string `json:"state"`
			} `json:"partitions"`
		} `json:"children"`
	}
	a := cl.do(t, get("/v1/topics/"+mirrorParent+"/children?partitions=true", root), 200)
	a.decode(t, &list)
	if len(list.Children) != 1 || list.Children[0].Name != mirrorChild || list.Children[0].Remote == nil || list.Children[0].State == "" {
		t.Errorf("children of a parent with a remote child: %s", a.body)
	}
	if !strings.Contains(string(a.body), `"created_by":"admin"`) || strings.Contains(string(a.body), "https://") {
		t.Errorf("the listing hides the creator from an admin, or shows a URL: %s", a.body)
	}
	cl.do(t, get("/v1/topics/"+mirrorParent+"/children", root), 200)
}

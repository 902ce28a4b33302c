package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// adminCall sends method path to url with a JSON content type and returns
// the status, the Retry-After header and the body.
func adminCall(t *testing.T, url, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 20 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// checkClusterAdminRoutes drives the cluster's admin writes on a running
// cluster of at least four voters through every node's wiring (api.md
// §2.17): a dry run, a decommission that makes the node refuse produces
// with 503 and Retry-After: 1, its cancel (conformance 145, 234); forget's
// refusals (236); abort's refusals (235).
func checkClusterAdminRoutes(t *testing.T, via, drained *node, leader, topic string) {
	t.Helper()
	const path = "/v1/cluster/members/n5/decommission"
	code, _, body := adminCall(t, via.url, "POST", path+"?dry_run=true", "")
	var v struct {
		Member            string `json:"member"`
		WouldDecommission bool   `json:"would_decommission"`
		Voter             bool   `json:"voter"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || code != 200 || v.Member != "n5" || !v.WouldDecommission || !v.Voter {
		t.Fatalf("dry run: %d %s", code, body)
	}
	if code, _, body := adminCall(t, via.url, "POST", path, ""); code != 204 {
		t.Fatalf("decommission: %d %s", code, body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, retry, body := adminCall(t, drained.url, "POST", "/v1/topics/"+topic+"/produce", `{"n":1}`)
		if code == 503 && retry == "1" && strings.Contains(body, "draining") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a produce to the draining node: %d %q %s", code, retry, body)
		}
		time.Sleep(100 * time.Millisecond) // polling the drained node's replica, bounded by the deadline
	}
	if code, _, body := adminCall(t, via.url, "DELETE", path, ""); code != 204 {
		t.Fatalf("cancel: %d %s", code, body)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		code, _, body := adminCall(t, drained.url, "POST", "/v1/topics/"+topic+"/produce", `{"n":2}`)
		if code == 202 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a produce after the cancel: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond) // polling, bounded by the deadline
	}
	for _, c := range []struct {
		path string
		want int
	}{
		{"/v1/cluster/members/" + leader + "/forget", 400},
		{"/v1/cluster/members/nobody/forget", 404},
		{"/v1/cluster/members/n2/forget", 409},
		{"/v1/cluster/moves/" + topic + "/0/abort", 409},
		{"/v1/cluster/moves/" + topic + "/x/abort", 400},
		{"/v1/cluster/moves/no-such-topic/0/abort", 404},
	} {
		if code, _, body := adminCall(t, via.url, "POST", c.path, ""); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.path, code, body, c.want)
		}
	}
}

// TestDecommissionRemovesAnEmptyNode grows three nodes to four, asks every
// member for its own status (conformance 232), then decommissions the
// newcomer, which owns nothing: the leader removes it from the voters and
// the member table (internals.md §9.5), after which three voters remain
// and a further decommission is refused with below_min_voters (233).
func TestDecommissionRemovesAnEmptyNode(t *testing.T) {
	port := scalePorts(t, 4)
	nodes := make([]*node, 4)
	for i := 1; i <= 3; i++ {
		nodes[i-1] = scaleSpawn(t, i, port, []int{1, 2, 3})
	}
	for _, n := range nodes[:3] {
		n.waitReady()
	}
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	c := client(t, nodes[0])
	scaleWaitMembers(t, c, []string{"n1", "n2", "n3", "n4"}, 4)

	detailed, err := c.MembersDetail(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range detailed {
		if m.NodeStatus == nil || m.NodeStatus.Node != m.ID {
			t.Fatalf("member %s without its own status: %+v (%s)", m.ID, m.NodeStatus, m.StatusError)
		}
	}
	code, _, body := adminCall(t, nodes[1].url, "POST", "/v1/cluster/members/n4/decommission?dry_run=true", "")
	if code != 200 || !strings.Contains(body, `"would_decommission":true`) || !strings.Contains(body, `"owned_partitions":0`) {
		t.Fatalf("dry run: %d %s", code, body)
	}
	if code, _, body := adminCall(t, nodes[1].url, "POST", "/v1/cluster/members/n4/decommission", ""); code != 204 {
		t.Fatalf("decommission: %d %s", code, body)
	}
	scaleWaitMembers(t, c, []string{"n1", "n2", "n3"}, 3)
	code, _, body = adminCall(t, nodes[0].url, "POST", "/v1/cluster/members/n3/decommission", "")
	if code != 409 || !strings.Contains(body, `"code":"below_min_voters"`) {
		t.Fatalf("decommission below three voters: %d %s", code, body)
	}
}

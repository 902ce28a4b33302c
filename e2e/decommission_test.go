package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
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
// refusals (236); abort's refusals of a bad partition and a missing topic
// (235; its 409 is checked where no partition moves).
func checkClusterAdminRoutes(t *testing.T, via, drained *node, leader, topic string) {
	t.Helper()
	other := "n2" // a member that does not lead
	if leader == other {
		other = "n3"
	}
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
		if code == 503 && retry == "1" && strings.Contains(body, "being decommissioned and takes no new produce") {
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
		{"/v1/cluster/members/" + other + "/forget", 409},
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
	port, nodes := scaleStartThree(t, 4)
	c := client(t, nodes[0])
	// Three partitions placed before the fourth node joins stay balanced
	// over four nodes (shares of 0 or 1): nothing moves, the newcomer owns
	// nothing, and an abort finds no move in flight (conformance 235).
	if _, err := c.CreateTopic(context.Background(), httpclient.TopicSpec{Name: "t", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "t")
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	scaleWaitMembers(t, c, []string{"n1", "n2", "n3", "n4"}, 4)
	if code, _, body := adminCall(t, nodes[2].url, "POST", "/v1/cluster/moves/t/0/abort", ""); code != 409 {
		t.Fatalf("abort with no move in flight: %d %s", code, body)
	}

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

// TestDecommissionUnderLoadMovesEverythingOff balances a topic over four
// nodes, then decommissions one that owns partitions while messages flow:
// the leader moves its partitions to the others (internals.md §11.7) and
// then removes it, and every accepted message is consumed.
func TestDecommissionUnderLoadMovesEverythingOff(t *testing.T) {
	port, nodes := scaleStartThree(t, 4)
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	clients := make([]*httpclient.Client, 4)
	for i, n := range nodes {
		clients[i] = client(t, n)
	}
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3", "n4"}, 4)
	if _, err := clients[0].CreateTopic(context.Background(), httpclient.TopicSpec{Name: "work", Partitions: 8}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[0], "work")
	scaleWaitBalanced(t, clients[0], 2, 2)

	l := newLedger()
	traffic := scaleStartTraffic(t, "work", l, clients[:3], clients[:3])
	if code, _, body := adminCall(t, nodes[0].url, "POST", "/v1/cluster/members/n4/decommission", ""); code != 204 {
		t.Fatalf("decommission: %d %s", code, body)
	}
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3"}, 3)
	traffic.halt()
	scaleDrain(t, "work", l, clients[:3])
	lost, dups := l.report()
	t.Logf("%d accepted while n4 drained and left, %d lost, %d duplicates; %d produces refused",
		len(l.accepted), len(lost), dups, traffic.failed.Load())
	if len(lost) > 0 || len(l.mismatch) > 0 || traffic.produced.Load() == 0 {
		t.Fatalf("lost %d (e.g. %v); %d mismatched; %d produced", len(lost), first(lost), len(l.mismatch), traffic.produced.Load())
	}
}

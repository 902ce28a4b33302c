package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// leaderSeries is the exposition line of a node leading the metadata shard.
const leaderSeries = `narad_raft_state{state="leader"} 1`

// leaderIndex polls the nodes at the given indexes until exactly one says
// it leads the metadata shard, and returns its index.
func leaderIndex(t *testing.T, nodes []*node, among ...int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		leaders := []int{}
		for _, i := range among {
			if scrape(nodes[i], leaderSeries) {
				leaders = append(leaders, i)
			}
		}
		if len(leaders) == 1 {
			return leaders[0]
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("no single metadata leader among nodes %v", among)
	return -1
}

// scrape reports whether n's /metrics holds the exposition line series.
func scrape(n *node, series string) bool {
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if line == series {
			return true
		}
	}
	return false
}

// others returns the indexes of nodes other than skip.
func others(n int, skip ...int) []int {
	var out []int
	for i := 0; i < n; i++ {
		keep := true
		for _, s := range skip {
			keep = keep && i != s
		}
		if keep {
			out = append(out, i)
		}
	}
	return out
}

// waitEveryTopicPlaced waits until every topic n lists has an owner for
// each partition: a create answered 201 (or a 503 whose change applied
// after all) must be placed, whatever failed around it (api.md §2.5).
func waitEveryTopicPlaced(t *testing.T, n *node, within time.Duration) int {
	t.Helper()
	c := client(t, n)
	deadline := time.Now().Add(within)
	unplaced := []string{}
	for {
		topics, err := c.ListTopics(context.Background())
		unplaced = unplaced[:0]
		for _, tp := range topics {
			if !placed(c, tp.Name) {
				unplaced = append(unplaced, tp.Name)
			}
		}
		switch {
		case err == nil && len(unplaced) == 0:
			return len(topics)
		case time.Now().After(deadline):
			t.Fatalf("%d topics not placed within %s (e.g. %v); list error %v", len(unplaced), within, first(unplaced), err)
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
}

// placed reports whether every partition of topic has an owner.
func placed(c *httpclient.Client, topic string) bool {
	tp, err := c.Topic(context.Background(), topic)
	if err != nil || len(tp.PartitionStats) != tp.Partitions {
		return false
	}
	for _, s := range tp.PartitionStats {
		if s.OwnerNode == "" {
			return false
		}
	}
	return true
}

// waitDispatched waits until every node's ingress WAL has handed all its
// records to their owners (narad_ingress_dispatch_backlog_records 0): a
// checkpoint stuck behind a record would leave nothing lost yet redeliver
// the whole backlog at every restart (internals.md §2.8, §3.3).
func waitDispatched(t *testing.T, nodes []*node, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, n := range nodes {
		for !scrape(n, "narad_ingress_dispatch_backlog_records 0") {
			if time.Now().After(deadline) {
				t.Fatalf("node on %d still has an ingress backlog %s after the load ended: %s",
					n.port, within, series(n, "narad_ingress_dispatch_backlog_records"))
			}
			time.Sleep(100 * time.Millisecond) // polling the node, bounded by the deadline
		}
	}
}

// series returns n's exposition lines that start with name.
func series(n *node, name string) string {
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "; ")
}

// longScenariosEnv, set to 1, runs the scenarios that wait out the
// cluster's own timers (about a minute and a half each); CI leaves them
// out.
const longScenariosEnv = "NARAD_E2E_LONG"

// deadMarkWithin bounds how long after a kill the leader marks the node
// dead: 30 s of silence (and 30 s of the leader's term) plus a 10 s
// controller tick (internals.md §8.7, §9.4), with slack. It bounds the
// revival after the restart too.
const deadMarkWithin = 60 * time.Second

// Dead-owner scenario (api.md §3.2, appendix C).
const (
	// ownerDownText is the plain-text answer to a pinned consume or an
	// ack whose partition owner is marked dead, sent with Retry-After 1.
	ownerDownText = "partition owner is down; retry later"
	// outageCheckWithin bounds each check made while the owner is dead
	// (produce and the live owners' consumes going on).
	outageCheckWithin = 30 * time.Second
	// deadOwnerLoadFor is how long the scenario's paced producers may
	// have to run: until the owner is marked dead, through the checks of
	// the outage, the restart and the load after it, each at its bound.
	deadOwnerLoadFor = deadMarkWithin + 2*outageCheckWithin + nodeReadyTimeout + loadAfterRestart
)

// deadOwnerCap is the scenario's message budget: what its producers (one
// batch each per failurePace) send in deadOwnerLoadFor, so they cannot run
// out before the checks; the shorter scenarios' failureCap lasts about
// 37 s of that load, less than a dead mark may take.
var deadOwnerCap = int(deadOwnerLoadFor/failurePace) * len(produceVia) * produceBatch

// ensure that an owner down long enough to be marked dead turns its pinned consumes and its acks into 503 "partition owner is down; retry later" with Retry-After 1, and is listed dead, while produce and the live owners' consumes go on; and that after its restart it is revived (listed alive, its partition served again) and every accepted id is delivered (internals.md §1.4, §1.7 "Node down", §9.4; api.md §2.14, §2.15, §3.2).
func TestClusterOwnerMarkedDeadAndRevivedLosesNothing(t *testing.T) {
	if os.Getenv(longScenariosEnv) != "1" {
		t.Skipf("waits out the 30 s dead timeout (about a minute and a half): set %s=1 to run it", longScenariosEnv)
	}
	began := time.Now()
	nodes := failoverCluster(t, "deadowner")
	victim := others(len(nodes), leaderIndex(t, nodes, 0, 1, 2))[0]
	live := (victim + 1) % len(nodes)
	owner := fmt.Sprintf("n%d", victim+1)
	w := newWorkload(t, nodes, "deadowner", deadOwnerCap, produceBatch)
	w.pace = failurePace
	w.start(produceVia, consumeVia)
	w.waitAccepted(killAfterAccepted, 30*time.Second)
	pinned := partitionOf(t, nodes[live], "deadowner", owner)
	held := leaseOn(t, nodes[live], "deadowner", pinned)

	nodes[victim].kill9()
	killedAt := time.Now()
	consumeURL := fmt.Sprintf("%s/v1/topics/deadowner/consume?partition=%d", nodes[live].url, pinned)
	body, retryAfter := waitOwnerDown(t, "pinned consume", deadMarkWithin, func() (*http.Response, error) { return http.Get(consumeURL) })
	t.Logf("%s marked dead: pinned consume of partition %d via n%d answers 503 %q (Retry-After %q) %s after the kill",
		owner, pinned, live+1, body, retryAfter, time.Since(killedAt).Round(time.Millisecond))
	checkOwnerDownAnswer(t, "pinned consume", body, retryAfter)
	ackURL := fmt.Sprintf("%s/v1/topics/deadowner/ack?receipt_handle=%s", nodes[live].url, url.QueryEscape(held))
	body, retryAfter = waitOwnerDown(t, "ack", outageCheckWithin, func() (*http.Response, error) {
		return http.Post(ackURL, "application/json", nil)
	})
	checkOwnerDownAnswer(t, "ack", body, retryAfter)
	waitMemberStatus(t, nodes[live], owner, "dead", outageCheckWithin)
	before, got := w.accepted.Load(), w.l.deliveries()
	w.waitAccepted(int(before)+outageAccepted, outageCheckWithin)
	w.waitDelivered(got+outageDelivered, outageCheckWithin)
	t.Logf("while %s is dead: %d more accepted, %d more delivered", owner, w.accepted.Load()-before, w.l.deliveries()-got)

	nodes[victim].restart()
	t.Logf("%s back %s after the kill", owner, time.Since(killedAt).Round(time.Millisecond))
	waitMemberStatus(t, nodes[live], owner, "alive", deadMarkWithin)
	replayURL := fmt.Sprintf("%s/v1/topics/deadowner/consume?partition=%d&offset=0", nodes[live].url, pinned)
	waitServed(t, replayURL, deadMarkWithin)
	t.Logf("%s revived: listed alive and its partition %d read via n%d %s after the kill",
		owner, pinned, live+1, time.Since(killedAt).Round(time.Millisecond))
	w.finishAfter(loadAfterRestart)
	w.verify("owner marked dead")
	t.Logf("dead-owner scenario took %s", time.Since(began).Round(time.Second))
}

// partitionOf returns a partition of topic that owner owns, read via n.
func partitionOf(t *testing.T, n *node, topic, owner string) int {
	t.Helper()
	tp, err := client(t, n).Topic(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tp.PartitionStats {
		if s.OwnerNode == owner {
			return s.Index
		}
	}
	t.Fatalf("%s owns no partition of %s: %+v", owner, topic, tp.PartitionStats)
	return -1
}

// leaseOn consumes one message of partition p via n and returns its
// receipt handle, left unacked: the scenario acks it once the owner is
// dead. Its lease lapses and the message comes back to the workload.
func leaseOn(t *testing.T, n *node, topic string, p int) string {
	t.Helper()
	c := client(t, n)
	deadline := time.Now().Add(outageCheckWithin)
	for time.Now().Before(deadline) {
		res, err := c.Consume(context.Background(), topic, httpclient.ConsumeOptions{Wait: consumeWait, Partition: &p})
		if err != nil {
			t.Fatalf("pinned consume of partition %d via %s: %v", p, n.url, err)
		}
		if len(res.Messages) > 0 {
			return res.Messages[0].ReceiptHandle
		}
	}
	t.Fatalf("no message of partition %d leased via %s within %s", p, n.url, outageCheckWithin)
	return ""
}

// waitOwnerDown sends what request builds until it answers 503 (a 502
// before: the owner is down but not yet marked dead) and returns the 503's
// body and Retry-After; any other answer fails the test.
func waitOwnerDown(t *testing.T, what string, within time.Duration, request func() (*http.Response, error)) (string, string) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := request()
		if err != nil {
			t.Fatalf("%s while the owner is down: %v", what, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
			return strings.TrimSpace(string(body)), resp.Header.Get("Retry-After")
		case http.StatusBadGateway:
		default:
			t.Fatalf("%s while its partition owner is down: %s, want 502 then 503", what, last)
		}
		time.Sleep(500 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("%s never answered 503 within %s of its owner's death; last %s", what, within, last)
	return "", ""
}

// checkOwnerDownAnswer checks a 503 for a dead owner: the plain text of
// api.md §3.2 and Retry-After 1.
func checkOwnerDownAnswer(t *testing.T, what, body, retryAfter string) {
	t.Helper()
	if body != ownerDownText || retryAfter != "1" {
		t.Errorf("%s of a dead owner's partition: 503 %q with Retry-After %q, want %q with 1", what, body, retryAfter, ownerDownText)
	}
}

// waitMemberStatus polls n's member list until member has status.
func waitMemberStatus(t *testing.T, n *node, member, status string, within time.Duration) {
	t.Helper()
	c := client(t, n)
	deadline := time.Now().Add(within)
	var last []httpclient.Member
	var err error
	for time.Now().Before(deadline) {
		last, err = c.Members(context.Background())
		for _, m := range last {
			if err == nil && m.ID == member && m.Status == status {
				return
			}
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("%s not listed %s via %s within %s: %+v (%v)", member, status, n.url, within, last, err)
}

// waitServed polls a replay read until it answers 200 (the partition's
// owner serves it again); 502 and 503 are retried, anything else fails.
func waitServed(t *testing.T, readURL string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := http.Get(readURL)
		if err != nil {
			t.Fatalf("replay read %s: %v", readURL, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = fmt.Sprintf("%d %s", resp.StatusCode, body)
		switch resp.StatusCode {
		case http.StatusOK:
			return
		case http.StatusBadGateway, http.StatusServiceUnavailable:
		default:
			t.Fatalf("replay read %s after the restart: %s", readURL, last)
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("replay read %s not served within %s of the restart; last %s", readURL, within, last)
}

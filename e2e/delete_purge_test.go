package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// purgeWithin is how soon after a delete every node must have purged the
// deleted incarnation's directories.
const purgeWithin = 10 * time.Second

// ensure that a topic deleted through one node of three leaves no directory of that incarnation on any node within seconds, without a restart, that consumers long-polling it are answered long before their wait ends, and that deleting and recreating the name logs no error on any node.
func TestDeletePurgesEveryNode(t *testing.T) {
	const topic, partitions = "doomed", 6
	nodes := startCluster(t, 3)
	clients := make([]*httpclient.Client, len(nodes))
	for i, n := range nodes {
		clients[i] = client(t, n)
	}
	ctx := context.Background()
	old := createFilledTopic(ctx, t, clients, topic, partitions)
	for _, n := range nodes { // round-robin placement: every node owns some
		waitIncarnationDir(t, n, topic, old)
	}
	l := newLedger()
	for i := range partitions { // one more per partition, accounted, then consumed
		p := i
		id := fmt.Sprintf("d-%d", p)
		if err := clients[p%len(clients)].Produce(ctx, topic, []byte(id), id, &p); err != nil {
			t.Fatal(err)
		}
		l.accept(id, []byte(id))
	}
	drain(ctx, t, clients[0], topic, l, 100)
	if lost, _ := l.report(); len(lost) > 0 {
		t.Fatalf("lost before the delete: %v", lost)
	}
	parked := parkConsumers(ctx, clients, topic)
	marks := make([]int, len(nodes))
	for i, n := range nodes {
		marks[i] = len(n.logs.String())
	}

	via := others(len(nodes), leaderIndex(t, nodes, 0, 1, 2))[0]
	began := time.Now()
	if err := clients[via].DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	waitPurged(t, nodes, topic, old, began)
	for i, err := range parked.wait(t, purgeWithin) {
		if err != nil && !isTopicNotFound(err) {
			t.Errorf("consumer parked on node %d: %v", i+1, err)
		}
	}

	recreated := createFilledTopic(ctx, t, clients[2:], topic, partitions)
	if recreated == old {
		t.Fatalf("the recreated topic kept the id %s", old)
	}
	for _, n := range nodes {
		waitIncarnationDir(t, n, topic, recreated)
		if left := incarnationDirs(t, n, topic, old); len(left) > 0 {
			t.Errorf("node on %d: the deleted incarnation came back: %v", n.port, left)
		}
	}
	for i, n := range nodes {
		if lines := errorLogLines(n.logs.String()[marks[i]:]); len(lines) > 0 {
			t.Errorf("node on %d logged errors during the delete and re-create:\n%s", n.port, strings.Join(lines, "\n"))
		}
	}
}

// createFilledTopic creates topic through via[0], waits until it is placed and
// every partition holds a committed record, and returns its incarnation id.
func createFilledTopic(ctx context.Context, t *testing.T, via []*httpclient.Client, topic string, partitions int) string {
	t.Helper()
	tp, err := via[0].CreateTopic(ctx, httpclient.TopicSpec{Name: topic, Partitions: partitions})
	if err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, via[0], topic)
	for i := range partitions {
		p := i
		if err := via[p%len(via)].Produce(ctx, topic, []byte(fmt.Sprintf("fill-%d", p)), "", &p); err != nil {
			t.Fatalf("produce to partition %d: %v", p, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := via[0].Topic(ctx, topic)
		if err == nil && got.ID == tp.ID && everyPartitionHolds(got, partitions) {
			return tp.ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (%s): not every partition committed a record within 30s: %+v %v", topic, tp.ID, got, err)
		}
		time.Sleep(50 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
}

func everyPartitionHolds(tp *httpclient.Topic, partitions int) bool {
	n := 0
	for _, s := range tp.PartitionStats {
		if s.Available() && s.HighWatermark > 0 {
			n++
		}
	}
	return n == partitions
}

// incarnationDirs lists n's directories of incarnation id of topic: the
// topic directory while its marker names id, and any quarantine of id.
func incarnationDirs(t *testing.T, n *node, topic, id string) []string {
	t.Helper()
	dir := filepath.Join(n.dataDir, "topics")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, topic+".stale-"+id):
			out = append(out, name)
		case name == topic:
			marker, err := os.ReadFile(filepath.Join(dir, name, "incarnation"))
			if errors.Is(err, os.ErrNotExist) {
				continue // between a purge's steps, or not stamped yet
			}
			if err != nil || strings.TrimSpace(string(marker)) == id {
				out = append(out, name)
			}
		}
	}
	return out
}

// waitIncarnationDir waits until n holds topic's directory stamped id.
func waitIncarnationDir(t *testing.T, n *node, topic, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for len(incarnationDirs(t, n, topic, id)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("node on %d holds no directory of %s (%s)", n.port, topic, id)
		}
		time.Sleep(20 * time.Millisecond) // polling the node's disk, bounded by the deadline
	}
}

// waitPurged waits until no node holds a directory of incarnation id.
func waitPurged(t *testing.T, nodes []*node, topic, id string, began time.Time) {
	t.Helper()
	deadline := began.Add(purgeWithin)
	for _, n := range nodes {
		for left := incarnationDirs(t, n, topic, id); len(left) > 0; left = incarnationDirs(t, n, topic, id) {
			if time.Now().After(deadline) {
				t.Fatalf("node on %d still holds %v of the deleted %s (%s) %s after the delete", n.port, left, topic, id, purgeWithin)
			}
			time.Sleep(20 * time.Millisecond) // polling the node's disk, bounded by the deadline
		}
	}
	t.Logf("every node purged %s (%s) %s after the delete", topic, id, time.Since(began).Round(time.Millisecond))
}

// parkedPolls is one long-poll consume per node, running.
type parkedPolls []chan error

// parkConsumers parks a consumer of topic on each node, with a wait far
// longer than a delete's answer should take.
func parkConsumers(ctx context.Context, clients []*httpclient.Client, topic string) parkedPolls {
	out := make(parkedPolls, len(clients))
	for i, c := range clients {
		done := make(chan error, 1)
		out[i] = done
		go func() {
			res, err := c.Consume(ctx, topic, httpclient.ConsumeOptions{Wait: 25 * time.Second})
			if err == nil && len(res.Messages) > 0 {
				err = fmt.Errorf("got %d messages of a drained topic", len(res.Messages))
			}
			done <- err
		}()
	}
	return out
}

// wait collects every poll's outcome, failing when one is not answered
// within limit.
func (p parkedPolls) wait(t *testing.T, limit time.Duration) []error {
	t.Helper()
	out := make([]error, len(p))
	deadline := time.After(limit)
	for i, done := range p {
		select {
		case out[i] = <-done:
		case <-deadline:
			t.Fatalf("the consumer parked on node %d was not answered within %s of the delete", i+1, limit)
		}
	}
	return out
}

func isTopicNotFound(err error) bool { return httpclient.StatusOf(err) == 404 }

// errorLogLines returns the error-level lines of a node's log.
func errorLogLines(logs string) []string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"error"`) {
			out = append(out, line)
		}
	}
	return out
}

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain/deadletter"
)

// ensure that on a 3-node cluster a poison message nacked every time is
// delivered exactly its topic's maximum receive count, even though the
// partition's owner is killed (kill -9) and restarted in the middle, and
// then lands once in the dead-letter topic with its origin, count and the
// reason of its last nack (each nack, sent through a node that does not
// own the partition, gives one), never to be delivered from its origin
// again (api-extensions.md "Dead letters").
func TestThreeNodesPoisonMessageDeadLettered(t *testing.T) {
	nodes := startCluster(t, 3)
	c1 := client(t, nodes[0])
	ctx := context.Background()
	if _, err := c1.CreateTopic(ctx, httpclient.TopicSpec{Name: "jobs-dlq", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	spec := httpclient.TopicSpec{Name: "jobs", Partitions: 3, VisibilityTimeoutMs: 5000,
		DeadLetter: &httpclient.DeadLetter{Topic: "jobs-dlq", MaxReceiveCount: 4}}
	if _, err := c1.CreateTopic(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c1, "jobs")
	waitPlaced(t, c1, "jobs-dlq")
	p := 1
	if err := c1.Produce(ctx, "jobs", []byte(`{"job":"poison"}`), "k1", &p); err != nil {
		t.Fatal(err)
	}
	owner := ownerIndex(t, c1, "jobs", p)
	via := client(t, nodes[(owner+1)%3]) // a node that does not own it
	for i := 1; i <= 4; i++ {
		if i == 3 {
			nodes[owner].kill9()
			nodes[owner].restart()
			t.Logf("owner n%d killed and restarted after 2 receives", owner+1)
		}
		h := receive(t, via, fmt.Sprintf("receive %d", i))
		if err := via.NackWith(ctx, "jobs", h, httpclient.NackOptions{Reason: fmt.Sprintf("attempt %d", i)}); err != nil {
			t.Fatalf("nack %d: %v", i, err)
		}
	}
	// The next delivery attempt would be the 5th: it moves the message.
	res, err := via.Consume(ctx, "jobs", httpclient.ConsumeOptions{Wait: 2 * time.Second})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("a 5th delivery from the origin: %+v (%v)", res.Messages, err)
	}
	letter := deadLetterOf(t, client(t, nodes[(owner+2)%3]))
	if letter.Topic != "jobs" || letter.Partition != int32(p) || letter.Offset != 0 || letter.ReceiveCount != 4 ||
		letter.Reason != "attempt 4" || string(letter.Payload) != `{"job":"poison"}` || string(letter.Key) != "k1" {
		t.Fatalf("dead letter %+v", letter)
	}
	res, err = via.Consume(ctx, "jobs", httpclient.ConsumeOptions{Wait: 2 * time.Second})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("after the dead letter the origin delivered %+v (%v)", res.Messages, err)
	}
}

// ownerIndex is the index in the cluster of the node owning partition p.
func ownerIndex(t *testing.T, c *httpclient.Client, topic string, p int) int {
	t.Helper()
	tp, err := c.Topic(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tp.PartitionStats {
		if s.Index == p {
			var i int
			if _, err := fmt.Sscanf(s.OwnerNode, "n%d", &i); err == nil {
				return i - 1
			}
		}
	}
	t.Fatalf("no owner of %s/%d in %+v", topic, p, tp.PartitionStats)
	return 0
}

// receive consumes the one message of topic jobs through c.
func receive(t *testing.T, c *httpclient.Client, what string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.Consume(context.Background(), "jobs", httpclient.ConsumeOptions{Wait: time.Second})
		if err != nil {
			t.Logf("%s: %v (retrying)", what, err)
			continue
		}
		if len(res.Messages) > 0 {
			return res.Messages[0].ReceiptHandle
		}
	}
	t.Fatalf("%s: nothing delivered within 30s", what)
	return ""
}

// deadLetterOf consumes the one dead letter of topic jobs-dlq through c.
func deadLetterOf(t *testing.T, c *httpclient.Client) deadletter.Letter {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.Consume(context.Background(), "jobs-dlq", httpclient.ConsumeOptions{Wait: time.Second})
		if err != nil || len(res.Messages) == 0 {
			continue
		}
		l, err := deadletter.ParseLetter(res.Messages[0].Payload)
		if err != nil {
			t.Fatalf("dead letter %s: %v", res.Messages[0].Payload, err)
		}
		return l
	}
	t.Fatal("no dead letter within 30s")
	return deadletter.Letter{}
}

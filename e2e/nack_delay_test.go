package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that on a 3-node cluster a nack with a delay, sent to nodes that
// own none or some of the partitions (single and batch forms, forwarded
// over the node RPC to each owner), keeps every message from every
// consumer for the delay and then redelivers all of them
// (api-extensions.md "Nack with a delay").
func TestThreeNodesNackWithDelay(t *testing.T) {
	nodes := startCluster(t, 3)
	c1, c2, c3 := client(t, nodes[0]), client(t, nodes[1]), client(t, nodes[2])
	ctx := context.Background()
	if _, err := c1.CreateTopic(ctx, httpclient.TopicSpec{Name: "later", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c1, "later")
	for p := range 3 {
		if err := c2.Produce(ctx, "later", []byte(fmt.Sprintf(`{"p":%d}`, p)), "", &p); err != nil {
			t.Fatal(err)
		}
	}
	var handles []string
	for len(handles) < 3 {
		res, err := c1.Consume(ctx, "later", httpclient.ConsumeOptions{Wait: 5 * time.Second})
		if err != nil || len(res.Messages) == 0 {
			t.Fatalf("consume %d: %v %+v", len(handles), err, res)
		}
		handles = append(handles, res.Messages[0].ReceiptHandle)
	}
	const delay = 3 * time.Second
	sent := time.Now()
	if err := c2.NackAfter(ctx, "later", handles[0], delay); err != nil {
		t.Fatal(err)
	}
	results, err := c3.NackBatchAfter(ctx, "later", handles[1:], delay)
	if err != nil || results[0].Status != 204 || results[1].Status != 204 {
		t.Fatalf("batch nack: %+v %v", results, err)
	}
	if err := c1.Ack(ctx, "later", handles[0]); err == nil {
		t.Fatal("the nacked handle still acks")
	}
	if held := seriesSum(nodes, "narad_nack_delayed_messages{"); held != 3 && time.Since(sent) < delay {
		t.Fatalf("the owners' narad_nack_delayed_messages add up to %v while 3 are held", held)
	}
	var back int
	for back < 3 {
		res, err := c3.Consume(ctx, "later", httpclient.ConsumeOptions{Wait: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			if time.Since(sent) > delay+10*time.Second {
				t.Fatalf("%d of 3 back %v after the nack", back, time.Since(sent))
			}
			continue
		}
		if early := time.Since(sent); early < delay {
			t.Fatalf("p%d redelivered %v after a nack delayed %v", res.Messages[0].Partition, early, delay)
		}
		if err := c3.Ack(ctx, "later", res.Messages[0].ReceiptHandle); err != nil {
			t.Fatal(err)
		}
		back++
	}
	t.Logf("all 3 back %v after the nack (delay %v)", time.Since(sent), delay)
}

// seriesSum adds up the values of the exposition lines of every node that
// start with prefix.
func seriesSum(nodes []*node, prefix string) float64 {
	total := 0.0
	for _, n := range nodes {
		for _, line := range strings.Split(series(n, prefix), "; ") {
			if f := strings.Fields(line); len(f) == 2 {
				v, _ := strconv.ParseFloat(f[1], 64)
				total += v
			}
		}
	}
	return total
}

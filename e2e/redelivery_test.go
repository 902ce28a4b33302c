package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that on a 3-node cluster a topic's redelivery backoff, set on one
// node and replicated to all, spaces out the redeliveries of a message
// nacked through other nodes (2 s, then 3 s, the cap) and of one whose
// lease lapsed (3 s after the lapse), and that clearing it makes a nack
// release the message at once again (api-extensions.md "Redelivery
// backoff").
func TestThreeNodesRedeliveryBackoff(t *testing.T) {
	nodes := startCluster(t, 3)
	c1, c2, c3 := client(t, nodes[0]), client(t, nodes[1]), client(t, nodes[2])
	ctx := context.Background()
	spec := httpclient.TopicSpec{Name: "retry", Partitions: 3, VisibilityTimeoutMs: 5000,
		Redelivery: &httpclient.Redelivery{InitialMs: 2000, Multiplier: 2, MaxMs: 3000}}
	if _, err := c1.CreateTopic(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c1, "retry")
	for _, c := range []*httpclient.Client{c1, c2, c3} {
		waitRedelivery(t, c, `{"initial_ms":2000,"multiplier":2,"max_ms":3000,"jitter":0}`)
	}
	p := 0
	if err := c2.Produce(ctx, "retry", []byte(`{"job":1}`), "", &p); err != nil {
		t.Fatal(err)
	}
	h, leased := redeliver(t, c1, time.Now(), 0)
	for i, wait := range []time.Duration{2 * time.Second, 3 * time.Second} {
		nacked := time.Now()
		if err := c3.Nack(ctx, "retry", h); err != nil {
			t.Fatalf("nack %d: %v", i+1, err)
		}
		h, leased = redeliver(t, c1, nacked, wait)
	}
	// The third delivery is left to lapse: back no sooner than its 5 s lease
	// plus the capped 3 s wait.
	h, _ = redeliver(t, c2, leased, 8*time.Second)
	if _, err := c1.AlterTopic(ctx, "retry", httpclient.TopicAlter{ClearRedelivery: true}); err != nil {
		t.Fatal(err)
	}
	waitRedelivery(t, c3, "")
	nacked := time.Now()
	if err := c3.Nack(ctx, "retry", h); err != nil {
		t.Fatal(err)
	}
	if _, _ = redeliver(t, c2, nacked, 0); time.Since(nacked) > 1500*time.Millisecond {
		t.Fatalf("without a policy a nack took %v to redeliver", time.Since(nacked))
	}
}

// redeliver consumes through c until the message is back and fails if it
// came sooner than notBefore after from. It returns the handle and when the
// consume that got it was sent (no later than its lease began).
func redeliver(t *testing.T, c *httpclient.Client, from time.Time, notBefore time.Duration) (string, time.Time) {
	t.Helper()
	deadline := from.Add(notBefore + 15*time.Second)
	for time.Now().Before(deadline) {
		sent := time.Now()
		res, err := c.Consume(context.Background(), "retry", httpclient.ConsumeOptions{Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			continue
		}
		if took := time.Since(from); took < notBefore {
			t.Fatalf("redelivered %v after, want no sooner than %v", took, notBefore)
		}
		t.Logf("redelivered %v after (not before %v)", time.Since(from).Round(time.Millisecond), notBefore)
		return res.Messages[0].ReceiptHandle, sent
	}
	t.Fatalf("not redelivered within %v", notBefore+15*time.Second)
	return "", time.Time{}
}

// waitRedelivery polls c's view of topic retry until its policy is want
// ("" for none).
func waitRedelivery(t *testing.T, c *httpclient.Client, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		tp, err := c.Topic(context.Background(), "retry")
		if err == nil {
			if got = string(tp.Redelivery); got == want {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("policy %q, want %q", got, want)
}

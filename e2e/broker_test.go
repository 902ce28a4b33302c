package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// waitPerPoll is the long-poll budget of each drain consume.
const waitPerPoll = time.Second

func client(t *testing.T, n *node) *httpclient.Client {
	t.Helper()
	c, err := httpclient.New(httpclient.Options{Servers: []string{n.url}, ClientName: "narad-e2e", Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ensure that 10,000 messages mixing JSON, plain text and random binary come back byte-identical through batch consume and batch ack, each exactly once, with nothing left.
func TestTenThousandMixedMessages(t *testing.T) {
	const total, batch = 10_000, 100
	n := startNode(t, t.TempDir(), freePorts(t))
	c := client(t, n)
	ctx := context.Background()
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "ledger", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	produceBatches(ctx, t, []*httpclient.Client{c}, "ledger", "m", 1, total, batch, l)
	drain(ctx, t, c, "ledger", l, batch)
	lost, dups := l.report()
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d (e.g. %v), %d not byte-identical (e.g. %v)", len(lost), first(lost), len(l.mismatch), first(l.mismatch))
	}
	if dups != 0 {
		t.Fatalf("%d duplicates without any failure", dups)
	}
	res, err := c.Consume(ctx, "ledger", httpclient.ConsumeOptions{})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("something left after the drain: %v %v", res.Messages, err)
	}
}

// ensure that kill -9 while clients produce loses no message that got a 202: after a restart every one is delivered at least once (duplicates reported).
func TestKill9WhileProducingLosesNothingAccepted(t *testing.T) {
	dir, port := t.TempDir(), freePorts(t)
	n := startNode(t, dir, port)
	c := client(t, n)
	ctx := context.Background()
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "crash", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	l := newLedger()
	var accepted atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, payload := fmt.Sprintf("w%d-%06d", w, i), payloadFor(r, i)
				if err := c.Produce(ctx, "crash", payload, id, nil); err != nil {
					return // the node died under us: this one is not counted
				}
				l.accept(id, payload)
				accepted.Add(1)
			}
		}(w)
	}
	deadline := time.Now().Add(30 * time.Second)
	for accepted.Load() < 2000 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // waiting for load to build, bounded
	}
	n.kill9()
	close(stop)
	wg.Wait()
	t.Logf("kill -9 after %d accepted produces", accepted.Load())

	n = startNode(t, dir, port)
	drain(ctx, t, client(t, n), "crash", l, 100)
	lost, dups := l.report()
	t.Logf("after restart: %d accepted, %d lost, %d duplicates", accepted.Load(), len(lost), dups)
	if len(lost) > 0 || len(l.mismatch) > 0 {
		t.Fatalf("lost %d accepted messages (e.g. %v); %d mismatched (e.g. %v)", len(lost), first(lost), len(l.mismatch), first(l.mismatch))
	}
}

func first(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that on a 3-node cluster `narad redrive` moves 20 dead letters
// back to their origin at no more than --rate a second, each one's key and
// payload byte for byte, and leaves the dead-letter topic empty
// (api-extensions.md "Redrive").
func TestRedriveDeadLettersBackToTheirOrigin(t *testing.T) {
	const total = 20
	nodes := startCluster(t, 3)
	c1, c3 := client(t, nodes[0]), client(t, nodes[2])
	ctx := context.Background()
	want := deadLettered(t, c1, c3, total, 0)

	start := time.Now()
	cmd := exec.Command(naradBin, "redrive", "jobs-dlq", "--rate", "10", "--wait", "500ms", "-s", nodes[1].url)
	cmd.Env = cliEnv(t)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("narad redrive: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
	}
	took := time.Since(start)
	t.Logf("redrive took %v; stderr:\n%s", took.Round(time.Millisecond), errOut.String())
	if out.String() != "redriven 20 dead letters from jobs-dlq (to their origins), skipped 0\n" {
		t.Fatalf("stdout %q", out.String())
	}
	if took < 1500*time.Millisecond {
		t.Fatalf("20 dead letters at --rate 10 took only %v", took)
	}

	got := drainTopic(t, c1, "jobs", total, httpclient.OpAck)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("jobs holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	res, err := c3.Consume(ctx, "jobs-dlq", httpclient.ConsumeOptions{Wait: time.Second, Max: 100})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("jobs-dlq after the redrive: %d message(s) (%v)", len(res.Messages), err)
	}
}

// drainTopic batch-consumes topic through c until n distinct messages came,
// settles each batch with op, and returns them as sorted key=payload lines.
func drainTopic(t *testing.T, c *httpclient.Client, topic string, n int, op httpclient.AckOp) []string {
	t.Helper()
	seen := map[[2]int64]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < n && time.Now().Before(deadline) {
		res, err := c.Consume(context.Background(), topic, httpclient.ConsumeOptions{Wait: time.Second, Max: 100})
		if err != nil {
			t.Logf("consume %s: %v (retrying)", topic, err)
			continue
		}
		var handles []string
		for _, m := range res.Messages {
			seen[[2]int64{int64(m.Partition), m.Offset}] = fmt.Sprintf("%q=%q", m.Key, m.Body)
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) == 0 {
			continue
		}
		results, err := c.AckBatch(context.Background(), topic, handles, op)
		if err != nil {
			t.Fatalf("%s of %d: %v", op, len(handles), err)
		}
		for i, r := range results {
			if r.Status != 204 {
				t.Fatalf("%s of %s: %d %s", op, handles[i], r.Status, r.Error)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// waitDeadLetters consumes jobs (moving what was received once) until
// jobs-dlq holds n records; jobs must deliver nothing meanwhile.
func waitDeadLetters(t *testing.T, c *httpclient.Client, n int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.Consume(context.Background(), "jobs", httpclient.ConsumeOptions{Wait: 500 * time.Millisecond, Max: 100})
		if err == nil && len(res.Messages) > 0 {
			t.Fatalf("jobs delivered %d message(s) past their maximum receive count", len(res.Messages))
		}
		tp, err := c.Topic(context.Background(), "jobs-dlq")
		if err != nil {
			continue
		}
		var held int64
		for _, s := range tp.PartitionStats {
			held += s.HighWatermark
		}
		if held == n {
			return
		}
		if held > n {
			t.Fatalf("jobs-dlq holds %d records, want %d", held, n)
		}
	}
	t.Fatalf("jobs-dlq did not reach %d records within 30s", n)
}

// cliEnv is the process environment without NARAD_ variables, and a fresh
// configuration directory, so the CLI talks only to the server -s names.
func cliEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NARAD_") {
			env = append(env, kv)
		}
	}
	return append(env, "NARAD_CONFIG_DIR="+t.TempDir())
}

// deadLettered creates jobs-dlq (its visibility timeout dlqVisibilityMs, 0
// for the default) and jobs, whose messages go to jobs-dlq after one
// receive; produces total messages to jobs through c, every fourth one a
// binary key and payload; receives and nacks each once through via, and
// waits until jobs-dlq holds them all. It returns their key=payload lines.
func deadLettered(t *testing.T, c, via *httpclient.Client, total int, dlqVisibilityMs int64) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "jobs-dlq", Partitions: 3, VisibilityTimeoutMs: dlqVisibilityMs}); err != nil {
		t.Fatal(err)
	}
	spec := httpclient.TopicSpec{Name: "jobs", Partitions: 3,
		DeadLetter: &httpclient.DeadLetter{Topic: "jobs-dlq", MaxReceiveCount: 1}}
	if _, err := c.CreateTopic(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "jobs")
	waitPlaced(t, c, "jobs-dlq")
	var msgs []httpclient.BatchMessage
	var want []string
	for i := range total {
		m := httpclient.BatchMessage{Key: fmt.Appendf(nil, "key-%03d", i), Payload: fmt.Appendf(nil, `{"job":%d}`, i)}
		if i%4 == 0 { // binary, key and payload
			m.Key, m.Payload = []byte{0xff, byte(i), byte(i >> 8), 0x00}, []byte{0x00, 0xfe, byte(i), byte(i >> 8), 0x80}
		}
		msgs = append(msgs, m)
		want = append(want, fmt.Sprintf("%q=%q", m.Key, m.Payload))
	}
	if _, err := c.ProduceBatch(ctx, "jobs", msgs); err != nil {
		t.Fatal(err)
	}
	// Each message is received once and nacked: its next delivery attempt
	// moves it to jobs-dlq.
	if got := drainTopic(t, via, "jobs", total, httpclient.OpNack); len(got) != total {
		t.Fatalf("received %d of %d", len(got), total)
	}
	waitDeadLetters(t, c, int64(total))
	return want
}

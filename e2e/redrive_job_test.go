package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that on a 3-node cluster a server-side redrive job returns every
// dead letter to its origin, key and payload byte for byte, at no more than
// its rate, although the metadata leader running it is killed (kill -9)
// and restarted in the middle: a new leader resumes it (runs 2 or more),
// waits out the dead leader's leases, and ends it done with the dead-letter
// topic empty (issue 19; api-extensions.md "Redrive").
func TestRedriveJobResumesAfterTheLeaderDies(t *testing.T) {
	const total, rate = 300, 40
	nodes := startCluster(t, 3)
	c1, c2, c3 := client(t, nodes[0]), client(t, nodes[1]), client(t, nodes[2])
	ctx := context.Background()
	want := deadLettered(t, c1, c3, total, 5000)

	r := rate
	start := time.Now()
	job, err := c2.StartRedrive(ctx, "jobs-dlq", httpclient.RedriveOptions{Rate: &r})
	if err != nil {
		t.Fatal(err)
	}
	leader := leaderIndex(t, nodes, 0, 1, 2)
	waitRedriven(t, nodes[leader], "jobs-dlq", rate) // about a second of work
	nodes[leader].kill9()
	t.Logf("leader n%d killed %s after the start", leader+1, time.Since(start).Round(time.Millisecond))
	nodes[leader].restart()

	live := client(t, nodes[(leader+1)%3])
	deadline := time.Now().Add(2 * time.Minute)
	for job.Running() && time.Now().Before(deadline) {
		if j, err := live.Redrive(ctx, "jobs-dlq"); err == nil {
			job = j
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	took := time.Since(start)
	t.Logf("job %+v after %s", job, took.Round(time.Millisecond))
	if job.State != httpclient.RedriveDone || job.Runs < 2 || job.Skipped != 0 {
		t.Fatalf("job %+v, want done, resumed, nothing skipped", job)
	}
	if minTook := time.Duration(total-rate/10) * time.Second / rate; took < minTook {
		t.Fatalf("%d letters at %d/s took only %s", total, rate, took)
	}
	got := drainDistinct(t, c1, "jobs")
	if missing := missingFrom(got, want); len(missing) > 0 {
		t.Fatalf("jobs lacks %d of %d letters, e.g. %s", len(missing), total, missing[0])
	}
	t.Logf("jobs holds %d records for %d letters (a batch in flight at the kill comes twice)", got.records, total)
	res, err := c3.Consume(ctx, "jobs-dlq", httpclient.ConsumeOptions{Wait: time.Second, Max: 100})
	if err != nil || len(res.Messages) != 0 {
		t.Fatalf("jobs-dlq after the redrive: %d message(s) (%v)", len(res.Messages), err)
	}
}

// waitRedriven polls n's narad_redrive_messages_total for topic until it
// reaches at least min.
func waitRedriven(t *testing.T, n *node, topic string, min int) {
	t.Helper()
	series := fmt.Sprintf(`narad_redrive_messages_total{topic=%q} `, topic)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if v := seriesValue(n, series); v >= float64(min) {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling another process, bounded by the deadline
	}
	t.Fatalf("%s did not reach %d on the leader within 30s", series, min)
}

// seriesValue is the value of the exposition line starting with prefix on
// n's /metrics, 0 when absent.
func seriesValue(n *node, prefix string) float64 {
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			v, _ := strconv.ParseFloat(rest, 64)
			return v
		}
	}
	return 0
}

// distinct is what a drain found: each key=payload once, and how many
// records carried them.
type distinct struct {
	lines   map[string]bool
	records int
}

// drainDistinct consumes and acks topic through c until two consumes in a
// row bring nothing.
func drainDistinct(t *testing.T, c *httpclient.Client, topic string) distinct {
	t.Helper()
	d := distinct{lines: map[string]bool{}}
	deadline := time.Now().Add(60 * time.Second)
	for empty := 0; empty < 2 && time.Now().Before(deadline); {
		res, err := c.Consume(context.Background(), topic, httpclient.ConsumeOptions{Wait: time.Second, Max: 100})
		if err != nil {
			t.Logf("consume %s: %v (retrying)", topic, err)
			continue
		}
		if len(res.Messages) == 0 {
			empty++
			continue
		}
		empty = 0
		var handles []string
		for _, m := range res.Messages {
			d.lines[fmt.Sprintf("%q=%q", m.Key, m.Body)] = true
			d.records++
			handles = append(handles, m.ReceiptHandle)
		}
		if _, err := c.AckBatch(context.Background(), topic, handles, httpclient.OpAck); err != nil {
			t.Fatalf("ack of %d: %v", len(handles), err)
		}
	}
	return d
}

// missingFrom lists the lines of want that d lacks.
func missingFrom(d distinct, want []string) []string {
	var out []string
	for _, w := range want {
		if !d.lines[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// benchRecords is how many records each shipping figure moves; the
// payload of each is a 256-byte JSON object.
const (
	benchRecords      = 200_000
	benchBusyRecords  = 1_000_000
	benchBatch        = 500
	benchKeys         = 1000
	benchLoadDuration = 10 * time.Second
	benchLoadWorkers  = 8
)

// TestRemoteShippingFigures measures remote replication between two
// secured 3-node clusters on loopback behind TLS proxies (the numbers in
// docs/performance.md): records shipped per second from a backlog with 1
// and 8 lanes, with and without zstd, and a single-message produce's
// latency on the source with and without a link shipping beside it. It
// only reports; set NARAD_E2E_BENCH_REMOTE=1 to run it:
//
//	NARAD_E2E_BENCH_REMOTE=1 go test -run TestRemoteShippingFigures -v -timeout 30m ./e2e/
func TestRemoteShippingFigures(t *testing.T) {
	if os.Getenv("NARAD_E2E_BENCH_REMOTE") == "" {
		t.Skip("a measurement: set NARAD_E2E_BENCH_REMOTE=1 to run it")
	}
	p := startRemotePair(t)
	asAdmin(t, p.b[0], "PUT", "/v1/users/"+replicatorID+"/grants",
		`{"grants":[{"action":"produce","patterns":["bench-*"]}]}`).want(t, "grant the replicator bench-*", 200, "")
	for _, sc := range []struct {
		lanes       int
		compression string
	}{{1, "none"}, {8, "none"}, {1, "zstd"}, {8, "zstd"}} {
		topic := fmt.Sprintf("bench-%d-%s", sc.lanes, sc.compression)
		p.benchTopics(t, topic)
		produceBacklog(t, p.aClient, topic, benchRecords)
		asAdmin(t, p.a[0], "PATCH", "/v1/remotes/"+remoteName, fmt.Sprintf(`{"limits":{"compression":%q}}`, sc.compression)).
			want(t, "set compression", 200, "")
		took := p.shipBacklog(t, topic, sc.lanes, benchRecords)
		t.Logf("FIGURE ship lanes=%d compression=%s: %d records in %s = %.0f records/s", sc.lanes, sc.compression,
			benchRecords, took.Round(time.Millisecond), float64(benchRecords)/took.Seconds())
	}
	p.benchTopics(t, "bench-load")
	quiet := produceLatencies(t, p.a[0], "bench-load", benchLoadDuration)
	p.benchTopics(t, "bench-busy")
	produceBacklog(t, p.aClient, "bench-busy", benchBusyRecords)
	start := p.attachBench(t, "bench-busy", 8)
	var busy produceTimes
	var wg sync.WaitGroup
	wg.Go(func() { busy = produceLatencies(t, p.a[0], "bench-load", benchLoadDuration) })
	shipped := p.waitHolds(t, "bench-busy", benchBusyRecords, start)
	wg.Wait()
	t.Logf("FIGURE ship lanes=8 compression=zstd beside the produce load: %d records in %s", benchBusyRecords, shipped.Round(time.Millisecond))
	t.Logf("FIGURE produce without shipping: %s", quiet)
	t.Logf("FIGURE produce while a link ships: %s", busy)
}

// benchTopics creates topic on A (the parent) and on B (the target).
func (p *remotePair) benchTopics(t *testing.T, topic string) {
	t.Helper()
	for _, c := range []*httpclient.Client{p.aClient, p.bClients[0]} {
		if _, err := c.CreateTopic(t.Context(), httpclient.TopicSpec{Name: topic, Partitions: remoteParts}); err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
		waitPlaced(t, c, topic)
	}
}

// produceBacklog produces n keyed JSON records of about 256 bytes to
// topic; their text is random hex, which zstd shrinks by about half.
func produceBacklog(t *testing.T, c *httpclient.Client, topic string, n int) {
	t.Helper()
	noise := make([]byte, 100)
	for done := 0; done < n; done += benchBatch {
		msgs := make([]httpclient.BatchMessage, benchBatch)
		for i := range msgs {
			seq := done + i
			_, _ = rand.Read(noise)
			msgs[i] = httpclient.BatchMessage{Key: []byte(fmt.Sprintf("k%d", seq%benchKeys)),
				Payload: []byte(fmt.Sprintf(`{"seq":%d,"data":"%x"}`, seq, noise))}
		}
		if _, err := c.ProduceBatch(t.Context(), topic, msgs); err != nil {
			t.Fatalf("produce to %s: %v", topic, err)
		}
	}
}

// shipBacklog attaches a remote child of topic (from earliest) and
// returns how long until B's topic holds n records.
func (p *remotePair) shipBacklog(t *testing.T, topic string, lanes, n int) time.Duration {
	t.Helper()
	return p.waitHolds(t, topic, n, p.attachBench(t, topic, lanes))
}

// attachBench attaches topic's remote child from earliest and returns when.
func (p *remotePair) attachBench(t *testing.T, topic string, lanes int) time.Time {
	t.Helper()
	body := fmt.Sprintf(`{"child":%q,"remote":%q,"remote_topic":%q,"from":"earliest","lanes":%d}`, topic+"-b", remoteName, topic, lanes)
	for { // one check of a remote per 5 s: wait out the 429's Retry-After
		start := time.Now()
		a := asAdmin(t, p.a[0], "POST", "/v1/topics/"+topic+"/children", body)
		if a.status != http.StatusTooManyRequests {
			a.want(t, "attach "+topic, 201, "")
			return start
		}
		time.Sleep(time.Second) // the rate limit's own pace
	}
}

// waitHolds waits until B's topic holds n records and returns the time
// since start.
func (p *remotePair) waitHolds(t *testing.T, topic string, n int, start time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for holds(t, p.b[0], topic) < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: B holds %d of %d records after 10 minutes", topic, holds(t, p.b[0], topic), n)
		}
		time.Sleep(20 * time.Millisecond) // polling B's topic, bounded by the deadline
	}
	return time.Since(start)
}

// holds sums topic's high watermarks on n.
func holds(t *testing.T, n *node, topic string) int64 {
	t.Helper()
	var d struct {
		Stats []struct {
			HighWatermark int64 `json:"high_watermark"`
		} `json:"partition_stats"`
	}
	a := asAdmin(t, n, "GET", "/v1/topics/"+topic, "")
	if err := json.Unmarshal([]byte(a.body), &d); err != nil {
		t.Fatalf("describe %s: %d %s", topic, a.status, a.body)
	}
	var sum int64
	for _, s := range d.Stats {
		sum += s.HighWatermark
	}
	return sum
}

// produceTimes summarizes single-message produce latencies.
type produceTimes []time.Duration

func (l produceTimes) String() string {
	if len(l) == 0 {
		return "no produce answered"
	}
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	at := func(q float64) time.Duration { return l[int(q*float64(len(l)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("%d produces, p50 %s, p99 %s, max %s", len(l), at(0.5), at(0.99), l[len(l)-1].Round(10*time.Microsecond))
}

// produceLatencies runs benchLoadWorkers workers producing single
// 256-byte messages to topic on n with a plain net/http client for d, and
// returns every answer's latency.
func produceLatencies(t *testing.T, n *node, topic string, d time.Duration) produceTimes {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	body := `{"pad":"` + strings.Repeat("x", 244) + `"}`
	var mu sync.Mutex
	var out produceTimes
	var wg sync.WaitGroup
	for range benchLoadWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, n.url+"/v1/topics/"+topic+"/produce", strings.NewReader(body))
				req.SetBasicAuth("admin", rootPassword)
				req.Header.Set("Content-Type", "application/json")
				began := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusAccepted {
					mu.Lock()
					out = append(out, time.Since(began))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return out
}

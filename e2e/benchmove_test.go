package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// benchMoveEnv, set to 1, runs TestBenchMoveCopyRate.
const benchMoveEnv = "NARAD_E2E_BENCH_MOVE"

// TestBenchMoveCopyRate measures what moving partitions costs (issue 16's
// speed figures): three nodes hold a topic of six partitions filled with
// about 20 MB each; a fourth node joins and takes its share while single
// produces keep arriving. It reports the destination's copy rate
// (narad_moves_bytes_total over the move phase's wall time and per move)
// and the produce p99 during the moves against the 10 s before the join.
// A measuring tool, off unless NARAD_E2E_BENCH_MOVE=1.
func TestBenchMoveCopyRate(t *testing.T) {
	if os.Getenv(benchMoveEnv) != "1" {
		t.Skipf("a measuring tool: set %s=1 to run it", benchMoveEnv)
	}
	port, nodes := scaleStartThree(t, 4)
	c := client(t, nodes[0])
	ctx := context.Background()
	scaleWaitMembers(t, c, []string{"n1", "n2", "n3"}, 3)
	if _, err := c.CreateTopic(ctx, httpclient.TopicSpec{Name: "bulk", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, c, "bulk")
	payload := bytes.Repeat([]byte("x"), 1024)
	for start := 0; start < 120_000; start += 500 {
		msgs := make([]httpclient.BatchMessage, 500)
		for i := range msgs {
			msgs[i] = httpclient.BatchMessage{Key: []byte(strconv.Itoa(start + i)), Payload: payload}
		}
		if _, err := c.ProduceBatch(ctx, "bulk", msgs); err != nil {
			t.Fatal(err)
		}
	}
	probe := newProduceProbe(client(t, nodes[1]), "bulk")
	probe.run(10 * time.Second)
	before := probe.p99()

	start := time.Now()
	nodes[3] = scaleSpawn(t, 4, port, []int{1, 2, 3, 4})
	nodes[3].waitReady()
	stop := probe.start()
	scaleWaitBalanced(t, c, 1, 2)
	elapsed := time.Since(start)
	stop()
	during := probe.p99()
	moved, busy := moveSeries(t, nodes[3])
	t.Logf("moves: %.1f MB copied to the new node in %.1f s from its start (%.1f MB/s), %.1f s of move time in all (%.1f MB/s per move)",
		moved/1e6, elapsed.Seconds(), moved/1e6/elapsed.Seconds(), busy, moved/1e6/busy)
	t.Logf("produce p99: %v in the 10 s before the join, %v while the partitions moved", before, during)
}

// produceProbe produces one message every 5 ms and records latencies.
type produceProbe struct {
	c     *httpclient.Client
	topic string
	mu    sync.Mutex
	lat   []time.Duration
}

func newProduceProbe(c *httpclient.Client, topic string) *produceProbe {
	return &produceProbe{c: c, topic: topic}
}

func (p *produceProbe) run(d time.Duration) {
	stop := p.start()
	time.Sleep(d) // the measuring window itself, not a synchronisation
	stop()
}

// start begins a fresh window; the returned stop ends it.
func (p *produceProbe) start() func() {
	p.mu.Lock()
	p.lat = nil
	p.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			t0 := time.Now()
			if err := p.c.Produce(context.Background(), p.topic, []byte(`{"probe":1}`), fmt.Sprint("p", i), nil); err == nil {
				p.mu.Lock()
				p.lat = append(p.lat, time.Since(t0))
				p.mu.Unlock()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (p *produceProbe) p99() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lat) == 0 {
		return 0
	}
	s := slices.Clone(p.lat)
	slices.Sort(s)
	return s[len(s)*99/100]
}

// moveSeries reads narad_moves_bytes_total and the sum of
// narad_moves_duration_seconds from n's metrics.
func moveSeries(t *testing.T, n *node) (bytes, seconds float64) {
	t.Helper()
	resp, err := http.Get(n.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "narad_moves_bytes_total":
			bytes = v
		case "narad_moves_duration_seconds_sum":
			seconds = v
		}
	}
	return bytes, seconds
}

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// The soak (internals.md §15.4, on one host): a 3-node loopback cluster
// under a fixed offered rate, open loop (a message is offered on schedule
// whether or not earlier ones were answered; its latency counts from that
// schedule), with a node killed with -9 and restarted every kill interval.
// Every report interval it logs what was offered, accepted, delivered and
// delivered again, how many accepted messages count as lost so far
// (undelivered past the loss deadline) and the produce-to-consume p50 and
// p99 (offered to first delivered, 1 ms buckets); at the
// end it drains and gives a verdict: lost (accepted, never delivered within
// the loss deadline after the load) must be 0.
//
// By default it runs a short slice fit for CI. NARAD_SOAK=1 switches to
// the long defaults (`go tool -modfile=tools.mod task soak`); each setting can be given on
// its own.
const (
	soakEnv             = "NARAD_SOAK"                 // 1: long defaults
	soakRateEnv         = "NARAD_SOAK_RATE"            // offered messages a second
	soakDurationEnv     = "NARAD_SOAK_DURATION"        // of the offered load
	soakKillIntervalEnv = "NARAD_SOAK_KILL_INTERVAL"   // between kills; 0 = none
	soakDownEnv         = "NARAD_SOAK_DOWN"            // a killed node stays down
	soakReportEnv       = "NARAD_SOAK_REPORT_INTERVAL" // between report lines
	soakLossEnv         = "NARAD_SOAK_LOSS_DEADLINE"   // the drain's limit

	soakTopic    = "soak"
	soakTick     = 20 * time.Millisecond // the scheduler's step
	soakBatchMax = 50                    // messages per produce at most
	soakSenders  = 32                    // produce requests in flight at most
	soakQueue    = 256                   // batches waiting for a sender before the scheduler sheds
	soakPad      = 160                   // payload padding, bytes
)

type soakConfig struct {
	rate                                    int
	duration, killEvery, down, report, loss time.Duration
}

// soakSettings reads the configuration from the environment.
func soakSettings(t *testing.T) soakConfig {
	t.Helper()
	c := soakConfig{rate: 200, duration: 20 * time.Second, killEvery: 7 * time.Second, down: 3 * time.Second,
		report: 5 * time.Second, loss: 45 * time.Second}
	if os.Getenv(soakEnv) == "1" {
		c = soakConfig{rate: 500, duration: 10 * time.Minute, killEvery: time.Minute, down: 5 * time.Second,
			report: 10 * time.Second, loss: 2 * time.Minute}
	}
	for _, d := range []struct {
		env string
		to  *time.Duration
	}{{soakDurationEnv, &c.duration}, {soakKillIntervalEnv, &c.killEvery}, {soakDownEnv, &c.down}, {soakReportEnv, &c.report}, {soakLossEnv, &c.loss}} {
		if v := os.Getenv(d.env); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed < 0 {
				t.Fatalf("%s=%q: want a duration such as 30s or 10m", d.env, v)
			}
			*d.to = parsed
		}
	}
	if v := os.Getenv(soakRateEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want messages a second", soakRateEnv, v)
		}
		c.rate = n
	}
	if c.report <= 0 {
		t.Fatalf("%s must be positive", soakReportEnv)
	}
	return c
}

// soakBatch is a run of consecutive sequences offered together.
type soakBatch struct {
	first   uint64
	offered []int64 // each message's scheduled time, unix ns
}

// soak drives the load through a workload (its clients, produce retries
// through the next node until a 202, and ack retries) and accounts in a
// soakLedger.
type soak struct {
	*workload
	cfg     soakConfig
	acct    *soakLedger
	batches chan soakBatch
	senders sync.WaitGroup
}

// ensure that a 3-node cluster under a fixed offered rate with a node killed with -9 and restarted every kill interval loses no accepted message, reporting per interval accepted, delivered, overdue and duplicate counts and the produce-to-consume p99 (internals.md §15.4); a short slice by default, the long soak with NARAD_SOAK=1 (`go tool -modfile=tools.mod task soak`).
func TestSoak(t *testing.T) {
	cfg := soakSettings(t)
	t.Logf("soak: %d msg/s for %s, kill -9 every %s (down %s), report every %s, loss deadline %s",
		cfg.rate, cfg.duration, cfg.killEvery, cfg.down, cfg.report, cfg.loss)
	nodes := startCluster(t, 3)
	if _, err := client(t, nodes[0]).CreateTopic(context.Background(), httpclient.TopicSpec{
		Name: soakTopic, Partitions: failoverPartitions, VisibilityTimeoutMs: failoverVisibilityMs}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, client(t, nodes[2]), soakTopic)
	s := &soak{workload: newWorkload(t, nodes, soakTopic, 0, soakBatchMax), cfg: cfg, acct: newSoakLedger(), batches: make(chan soakBatch, soakQueue)}
	began := time.Now()
	stopReports := s.reportEvery(began)
	s.start()

	kills := s.killOnSchedule(nodes, began)
	time.Sleep(time.Until(began.Add(cfg.duration))) // the load's duration, not a synchronization
	s.stopProducing()
	s.producers.Wait()
	s.senders.Wait()
	stopped := time.Now()
	for n, _ := s.acct.missing(); n > 0 && time.Since(stopped) < cfg.loss; n, _ = s.acct.missing() {
		time.Sleep(50 * time.Millisecond) // polling the consumers, bounded by the loss deadline
	}
	s.stop()
	stopReports()

	total, unknown := s.acct.totals()
	lost, lostIDs := s.acct.missing()
	verdict := "PASS"
	if lost > 0 || len(unknown) > 0 {
		verdict = "FAIL"
	}
	t.Logf("soak verdict %s after %s: %s; lost %d; %d kills (%s); client failures: %s",
		verdict, time.Since(began).Round(time.Second), total, lost, len(kills), strings.Join(kills, ", "), s.failures.String())
	if lost > 0 {
		t.Errorf("soak: %d accepted messages never delivered within %s after the load (e.g. %v)", lost, cfg.loss, lostIDs)
	}
	if len(unknown) > 0 {
		t.Errorf("soak: %d deliveries of ids never offered or with other bytes (e.g. %v)", len(unknown), first(unknown))
	}
}

// start runs the scheduler, the senders and two consumers per node.
func (s *soak) start() {
	s.producers.Add(1)
	go s.schedule()
	for i := range soakSenders {
		s.senders.Add(1)
		go s.sendBatches(i % len(s.clients))
	}
	for i := range 2 * len(s.clients) {
		s.consumers.Add(1)
		go s.consume(i % len(s.clients))
	}
}

// schedule offers rate messages a second in steps of soakTick, shedding
// (and counting) what finds every sender busy and the queue full.
func (s *soak) schedule() {
	defer s.producers.Done()
	defer close(s.batches)
	tick := time.NewTicker(soakTick)
	defer tick.Stop()
	start, offered := time.Now(), 0
	for {
		select {
		case <-s.stopProduce:
			return
		case <-tick.C:
		}
		due := int(time.Since(start).Seconds() * float64(s.cfg.rate))
		for offered < due {
			n := min(due-offered, soakBatchMax)
			b := soakBatch{first: s.acct.offer(n), offered: make([]int64, n)}
			for i := range n {
				b.offered[i] = start.Add(time.Duration(offered+i) * time.Second / time.Duration(s.cfg.rate)).UnixNano()
			}
			offered += n
			select {
			case s.batches <- b:
			default:
				s.acct.shed(n)
			}
		}
	}
}

// sendBatches produces queued batches through home, retrying through the
// next node until a 202 (workload.send).
func (s *soak) sendBatches(home int) {
	defer s.senders.Done()
	for b := range s.batches {
		msgs := make([]httpclient.BatchMessage, len(b.offered))
		for i, at := range b.offered {
			seq := b.first + uint64(i)
			p, _ := json.Marshal(soakPayload{Seq: seq, Offered: at, Pad: strings.Repeat("x", soakPad)})
			msgs[i] = httpclient.BatchMessage{Key: []byte(soakKey(seq)), Payload: p}
		}
		if s.send(home, msgs) {
			s.acct.accept(b.first, b.offered)
		}
	}
}

// consume long-polls batches from home (from the next node while home does
// not answer at all), records them and acks them through the next node.
func (s *soak) consume(home int) {
	defer s.consumers.Done()
	pause, at := retryPauseMin, home
	for !s.stopped(s.stopConsume) {
		res, err := s.clients[at].Consume(s.ctx, s.topic, httpclient.ConsumeOptions{Max: consumeBatchMax, Wait: consumeWait})
		if err != nil {
			s.fail("consume", at, err)
			if !s.pause(s.stopConsume, backoff(err, pause)) {
				return
			}
			pause = min(2*pause, retryPauseMax)
			if httpclient.StatusOf(err) == 0 {
				at = (at + 1) % len(s.clients)
			}
			continue
		}
		pause = retryPauseMin
		now := time.Now()
		handles := make([]string, 0, len(res.Messages))
		for _, m := range res.Messages {
			s.acct.deliver(m, now)
			handles = append(handles, m.ReceiptHandle)
		}
		if len(handles) > 0 {
			s.ack((at+1)%len(s.clients), handles)
		}
		at = home
	}
}

// reportEvery logs one line per report interval until the returned stop
// is called, which logs the last, partial interval.
func (s *soak) reportEvery(began time.Time) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	line := func(from time.Time) time.Time {
		now := time.Now()
		c, overdue := s.acct.rotate(now.Add(-s.cfg.loss))
		s.t.Logf("soak [%6s-%6s] %s; lost(>%s) %d", from.Sub(began).Round(time.Second), now.Sub(began).Round(time.Second), c, s.cfg.loss, overdue)
		return now
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(s.cfg.report)
		defer tick.Stop()
		from := began
		for {
			select {
			case <-done:
				line(from)
				return
			case <-tick.C:
				from = line(from)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// killOnSchedule kills a node with -9 at every kill interval of the load
// (a follower, then the Raft leader, in turn), keeps it down, restarts it
// and returns once the load's duration leaves no room for another, with
// what it did.
func (s *soak) killOnSchedule(nodes []*node, began time.Time) []string {
	var done []string
	if s.cfg.killEvery <= 0 {
		return nil
	}
	all := []int{0, 1, 2}
	end := began.Add(s.cfg.duration)
	for i, next := 0, began.Add(s.cfg.killEvery); next.Add(s.cfg.down).Before(end); i, next = i+1, next.Add(s.cfg.killEvery) {
		time.Sleep(time.Until(next)) // the kill schedule, not a synchronization
		leader := leaderIndex(s.t, nodes, all...)
		victim, role := others(len(nodes), leader)[(i/2)%2], "follower"
		if i%2 == 1 {
			victim, role = leader, "leader"
		}
		killed := time.Now()
		nodes[victim].kill9()
		holdDown(killed, s.cfg.down) // the outage itself
		nodes[victim].restart()
		done = append(done, fmt.Sprintf("n%d (%s) at %s", victim+1, role, killed.Sub(began).Round(time.Second)))
		s.t.Logf("soak: kill -9 of n%d (%s) at %s, back after %s", victim+1, role,
			killed.Sub(began).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
	}
	return done
}

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/httpclient"
)

// Scale-out runs each node on its own loopback address with one shared port
// pair (HTTP and node RPC on p, Raft on p+1), as a real cluster shares its
// ports: a joiner finds its peers' node RPC at their Raft host and the
// shared client port (internals.md §9.1).

// scaleHostBase is the last octet before node 1's loopback address.
const scaleHostBase = 40

// scaleJoinTimeout bounds admission, catch-up and promotion of a joiner.
const scaleJoinTimeout = 90 * time.Second

func scaleHost(i int) string { return fmt.Sprintf("127.0.0.%d", scaleHostBase+i) }

// scalePorts returns a port p such that TCP p and p+1 and UDP p are free on
// the loopback addresses of nodes 1..n.
func scalePorts(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		p := 20000 + rand.IntN(30000)
		if scalePortFree(p, n) {
			return p
		}
	}
	t.Fatal("no port free on every scale-out loopback address")
	return 0
}

func scalePortFree(p, n int) bool {
	var closers []func() error
	defer func() {
		for _, c := range closers {
			_ = c()
		}
	}()
	for i := 1; i <= n; i++ {
		for _, port := range []int{p, p + 1} {
			ln, err := net.Listen("tcp", net.JoinHostPort(scaleHost(i), fmt.Sprint(port)))
			if err != nil {
				return false
			}
			closers = append(closers, ln.Close)
		}
		pc, err := net.ListenPacket("udp", net.JoinHostPort(scaleHost(i), fmt.Sprint(p)))
		if err != nil {
			return false
		}
		closers = append(closers, pc.Close)
	}
	return true
}

// scaleSpawn starts node i of a cluster whose first three nodes bootstrap
// together; peers lists the nodes it knows.
func scaleSpawn(t *testing.T, i, port int, peers []int) *node {
	t.Helper()
	list := make([]string, len(peers))
	for k, p := range peers {
		list[k] = fmt.Sprintf("n%d@%s:%d", p, scaleHost(p), port+1)
	}
	n := spawn(t, t.TempDir(), port, []string{
		fmt.Sprintf("NARAD_NODE_ID=n%d", i),
		fmt.Sprintf("NARAD_HTTP_ADDR=%s:%d", scaleHost(i), port),
		fmt.Sprintf("NARAD_CLUSTER_ADDR=%s:%d", scaleHost(i), port+1),
		"NARAD_CLUSTER_PEERS=" + strings.Join(list, ","),
		"NARAD_CLUSTER_INITIAL_MEMBERS=n1,n2,n3",
		"NARAD_CLUSTER_SECRET=" + clusterSecret,
		"NARAD_SECURITY_ENABLED=false",
		"NARAD_SECURITY_ALLOW_INSECURE_CLUSTER=true",
		"NARAD_LOG_LEVEL=warn",
	})
	n.url = fmt.Sprintf("http://%s:%d", scaleHost(i), port)
	return n
}

// scaleStartThree starts nodes 1-3 of a cluster that will grow to total
// nodes, waits until they are ready, and returns the shared port and the
// node slots (the later ones nil until spawned).
func scaleStartThree(t *testing.T, total int) (int, []*node) {
	t.Helper()
	port := scalePorts(t, total)
	nodes := make([]*node, total)
	for i := 1; i <= 3; i++ {
		nodes[i-1] = scaleSpawn(t, i, port, []int{1, 2, 3})
	}
	for _, n := range nodes[:3] {
		n.waitReady()
	}
	return port, nodes
}

// scaleTraffic produces to a topic through some nodes and consumes (with
// acks) through others until stopped, recording every 202 and delivery.
type scaleTraffic struct {
	l        *ledger
	stop     chan struct{}
	wg       sync.WaitGroup
	produced atomic.Int64
	failed   atomic.Int64
}

func scaleStartTraffic(t *testing.T, topic string, l *ledger, producers, consumers []*httpclient.Client) *scaleTraffic {
	tr := &scaleTraffic{l: l, stop: make(chan struct{})}
	tr.wg.Add(2)
	go func() {
		defer tr.wg.Done()
		r := rand.New(rand.NewPCG(11, 12))
		for i := 0; ; i++ {
			select {
			case <-tr.stop:
				return
			case <-time.After(5 * time.Millisecond): // pacing the load, not synchronizing
			}
			id, payload := fmt.Sprintf("s-%06d", i), payloadFor(r, i)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := producers[i%len(producers)].Produce(ctx, topic, payload, id, nil)
			cancel()
			if err != nil {
				tr.failed.Add(1) // not 202'd: not owed to the ledger
				continue
			}
			l.accept(id, payload)
			tr.produced.Add(1)
		}
	}()
	go func() {
		defer tr.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-tr.stop:
				return
			default:
			}
			scaleConsumeOnce(t, consumers[i%len(consumers)], topic, l, false)
		}
	}()
	return tr
}

func (tr *scaleTraffic) halt() {
	close(tr.stop)
	tr.wg.Wait()
}

// scaleConsumeOnce consumes one batch and acks it, reporting how many came.
// Errors during the scale-out are tolerated (strict=false): the messages
// stay owed and the final drain must still deliver them.
func scaleConsumeOnce(t *testing.T, c *httpclient.Client, topic string, l *ledger, strict bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := consumeAndAck(ctx, c, topic, l, 50)
	if err != nil && strict {
		t.Error(err)
	}
	return n
}

// scaleDrain consumes through the given nodes in turn until every accepted
// id was delivered, or the deadline passes.
func scaleDrain(t *testing.T, topic string, l *ledger, via []*httpclient.Client) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if lost, _ := l.report(); len(lost) == 0 {
			return
		}
		scaleConsumeOnce(t, via[i%len(via)], topic, l, true)
		if t.Failed() {
			return
		}
	}
}

// scaleWaitBalanced polls until no move is in flight and every member owns
// between lo and hi partitions.
func scaleWaitBalanced(t *testing.T, c *httpclient.Client, lo, hi int) []httpclient.Member {
	t.Helper()
	deadline := time.Now().Add(scaleJoinTimeout)
	var last []httpclient.Member
	for time.Now().Before(deadline) {
		ms, err := c.Members(context.Background())
		mv, merr := c.Moves(context.Background(), false)
		if err == nil && merr == nil && len(mv) == 0 {
			last = ms
			ok := true
			for _, m := range ms {
				ok = ok && m.OwnedPartitions >= lo && m.OwnedPartitions <= hi
			}
			if ok {
				return ms
			}
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("the partitions never spread over the members: %+v", last)
	return nil
}

// scaleWaitMembers polls until the members listing shows want ids, all
// alive, and the voters and leader the scale-out should end with.
func scaleWaitMembers(t *testing.T, c *httpclient.Client, want []string, voters int) []httpclient.Member {
	t.Helper()
	deadline := time.Now().Add(scaleJoinTimeout)
	var last []httpclient.Member
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = c.Members(context.Background())
		if lastErr == nil && scaleMembersMatch(last, want, voters) {
			return last
		}
		time.Sleep(200 * time.Millisecond) // polling the cluster, bounded by the deadline
	}
	t.Fatalf("members never became %v with %d voters: %+v (%v)", want, voters, last, lastErr)
	return nil
}

func scaleMembersMatch(ms []httpclient.Member, want []string, voters int) bool {
	ids, nVoters, leaders := []string{}, 0, 0
	for _, m := range ms {
		if m.Status != "alive" {
			return false
		}
		ids = append(ids, m.ID)
		if m.Voter {
			nVoters++
		}
		if m.Leader {
			leaders++
		}
	}
	return slices.Equal(ids, want) && nVoters == voters && leaders == 1
}

// ensure that a running 3-node cluster grows to 5 (internals.md §9.2-§9.3,
// §9.6; api.md §6.4): nodes 4 and 5 start join-only knowing the first three,
// are admitted as non-voters and promoted, turn ready and are listed as
// alive voters; a topic created afterwards is placed on them too; produce
// and consume through them work; and every message that got a 202 while
// the cluster grew, or through the new nodes, is consumed: nothing lost.
func TestScaleOutThreeToFive(t *testing.T) {
	port := scalePorts(t, 5)
	nodes := make([]*node, 5)
	for i := 1; i <= 3; i++ {
		nodes[i-1] = scaleSpawn(t, i, port, []int{1, 2, 3})
	}
	for _, n := range nodes[:3] {
		n.waitReady()
	}
	clients := make([]*httpclient.Client, 5)
	for i, n := range nodes[:3] {
		clients[i] = client(t, n)
	}
	ctx := context.Background()
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3"}, 3)
	if _, err := clients[0].CreateTopic(ctx, httpclient.TopicSpec{Name: "before", Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	waitPlaced(t, clients[1], "before")

	l := newLedger()
	traffic := scaleStartTraffic(t, "before", l, clients[:3], clients[:3])
	for i := 4; i <= 5; i++ {
		nodes[i-1] = scaleSpawn(t, i, port, []int{1, 2, 3, i})
	}
	for i := 3; i < 5; i++ {
		nodes[i].waitReady()
		clients[i] = client(t, nodes[i])
	}
	scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3", "n4", "n5"}, 5)
	// The leader rebalances "before" onto the new nodes while the traffic
	// runs (internals.md §11): six partitions over five nodes.
	members := scaleWaitBalanced(t, clients[0], 1, 2)
	t.Logf("members after the scale-out and the moves: %+v", members)
	if listed := scaleWaitMembers(t, clients[4], []string{"n1", "n2", "n3", "n4", "n5"}, 5); len(listed) != 5 {
		t.Fatalf("node 5 lists %+v", listed)
	}

	if _, err := clients[3].CreateTopic(ctx, httpclient.TopicSpec{Name: "after", Partitions: 10}); err != nil {
		t.Fatalf("create via node 4: %v", err)
	}
	waitPlaced(t, clients[4], "after")
	tp, err := clients[0].Topic(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]int{}
	for _, s := range tp.PartitionStats {
		owners[s.OwnerNode]++
	}
	if owners["n4"] == 0 || owners["n5"] == 0 {
		t.Fatalf("the new topic's partitions skip the new nodes: %v", owners)
	}

	la := newLedger()
	produceBatches(ctx, t, clients[3:5], "after", "a", 13, 1000, 100, la)
	traffic.halt()
	scaleDrain(t, "after", la, clients[3:])
	scaleDrain(t, "before", l, clients)

	for name, led := range map[string]*ledger{"before": l, "after": la} {
		lost, dups := led.report()
		t.Logf("%s: %d accepted, %d lost, %d duplicates", name, len(led.accepted), len(lost), dups)
		if len(lost) > 0 || len(led.mismatch) > 0 {
			t.Errorf("%s: lost %d (e.g. %v); %d mismatched (e.g. %v)", name, len(lost), first(lost), len(led.mismatch), first(led.mismatch))
		}
	}
	// Each former owner's stale-copy sweep reclaims the copy it kept.
	waitDisksMatchOwners(t, clients[0], "before", nodes)
	t.Logf("during the scale-out: %d produces got 202, %d failed", traffic.produced.Load(), traffic.failed.Load())
	if traffic.produced.Load() == 0 {
		t.Fatal("no traffic flowed while the cluster grew")
	}
	leader := ""
	for _, m := range scaleWaitMembers(t, clients[0], []string{"n1", "n2", "n3", "n4", "n5"}, 5) {
		if m.Leader {
			leader = m.ID
		}
	}
	checkClusterAdminRoutes(t, nodes[1], nodes[4], leader, "after")
}

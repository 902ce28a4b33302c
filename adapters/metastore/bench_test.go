package metastore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/loopbackport"
	"github.com/narad/narad/domain/meta"
)

// benchProposals proposes b.N topic creates from workers goroutines through
// nodes (round robin) and reports throughput and latency percentiles.
func benchProposals(b *testing.B, nodes []*node, workers int) {
	lat := make([]time.Duration, b.N)
	var next int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= int64(b.N) {
					return
				}
				n := nodes[int(i)%len(nodes)]
				t0 := time.Now()
				_, err := n.store.Propose(context.Background(), createTopic(fmt.Sprintf("b%d-%d", w, i), int(i)+1))
				lat[i] = time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "proposals/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

func benchNode(b *testing.B, dir string) *node {
	h, err := NewHost(HostConfig{NodeID: "bench", RaftAddr: loopbackport.Addr(b), DataDir: dir, RTT: defaultRTT, Logger: testLogger()})
	if err != nil {
		b.Fatal(err)
	}
	s, err := h.OpenMetadata(StoreConfig{})
	if err != nil {
		b.Fatal(err)
	}
	n := &node{id: "bench", dir: dir, host: h, store: s}
	waitLeader(b, n)
	return n
}

func waitLeader(b *testing.B, nodes ...*node) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, n := range nodes {
			if n.store.IsLeader() {
				return
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("no leader")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkProposeApply1Node: proposals applied on one node, 1 and 16 in
// flight (each apply batch is one synced pebble commit).
func BenchmarkProposeApply1Node(b *testing.B) {
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("inflight-%d", workers), func(b *testing.B) {
			n := benchNode(b, b.TempDir())
			defer n.stop()
			benchProposals(b, []*node{n}, workers)
		})
	}
}

// BenchmarkProposeApply3Nodes: the same through three loopback nodes,
// proposals spread over all of them.
func BenchmarkProposeApply3Nodes(b *testing.B) {
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("inflight-%d", workers), func(b *testing.B) {
			members := map[string]string{"n1": loopbackport.Addr(b), "n2": loopbackport.Addr(b), "n3": loopbackport.Addr(b)}
			var nodes []*node
			for _, id := range []string{"n1", "n2", "n3"} {
				h, err := NewHost(HostConfig{NodeID: id, RaftAddr: members[id], DataDir: b.TempDir(), RTT: defaultRTT, Logger: testLogger()})
				if err != nil {
					b.Fatal(err)
				}
				defer h.Close()
				s, err := h.OpenMetadata(StoreConfig{InitialMembers: members})
				if err != nil {
					b.Fatal(err)
				}
				nodes = append(nodes, &node{id: id, host: h, store: s})
			}
			waitLeader(b, nodes...)
			benchProposals(b, nodes, workers)
		})
	}
}

const benchTopics = 10_000

// populate proposes benchTopics creates with 64 in flight.
func populate(b *testing.B, n *node) {
	var wg sync.WaitGroup
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < benchTopics; i += 64 {
				if _, err := n.store.Propose(context.Background(), createTopic(fmt.Sprintf("topic-%05d", i), i+1)); err != nil {
					b.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
}

// BenchmarkOpenNode10kTopics: restart a node holding 10,000 topics until
// its local views serve a full listing (ns/op), then until it leads again
// (leader-ms: mostly the election timeout). Also reports the heap the open
// store holds and the state machine's bytes on disk.
func BenchmarkOpenNode10kTopics(b *testing.B) {
	dir := b.TempDir()
	addr := loopbackport.Addr(b)
	open := func() *node {
		h, err := NewHost(HostConfig{NodeID: "bench", RaftAddr: addr, DataDir: dir, RTT: defaultRTT, Logger: testLogger()})
		if err != nil {
			b.Fatal(err)
		}
		s, err := h.OpenMetadata(StoreConfig{})
		if err != nil {
			b.Fatal(err)
		}
		return &node{host: h, store: s}
	}
	n := open()
	waitLeader(b, n)
	populate(b, n)
	n.stop()
	before := heapInUse()
	var held int64
	var leaderWait time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n = open()
		all, err := n.store.ListTopics("", 0)
		if err != nil || len(all) != benchTopics {
			b.Fatalf("listed %d topics, %v", len(all), err)
		}
		b.StopTimer()
		t0 := time.Now()
		waitLeader(b, n)
		leaderWait += time.Since(t0)
		all = nil
		held = heapInUse() - before
		n.stop()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(leaderWait.Milliseconds())/float64(b.N), "leader-ms")
	b.ReportMetric(float64(held), "heap-B/10k-topics")
	b.ReportMetric(float64(dirBytes(filepath.Join(dir, "fsm"))), "disk-B/10k-topics")
}

// BenchmarkSaveSnapshot10kTopics: stream a snapshot of 10,000 topics; the
// allocation per snapshot must stay small whatever the database size.
func BenchmarkSaveSnapshot10kTopics(b *testing.B) {
	s := newStateMachine(newDBFiles(b.TempDir(), testLogger()), testLogger(), meta.JournalKeep, nil)
	if _, err := s.Open(nil); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < benchTopics; i += 500 {
		var envs []meta.Envelope
		for j := i; j < i+500; j++ {
			envs = append(envs, createTopic(fmt.Sprintf("topic-%05d", j), j+1))
		}
		if _, err := s.Update(entries(b, uint64(i+1), envs...)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		state, err := s.PrepareSnapshot()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.SaveSnapshot(state, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func dirBytes(dir string) int64 {
	var total int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			total += info.Size()
		}
		return nil
	})
	return total
}

// BenchmarkTopicAssignments reads a placed topic's six rows as the consume
// path does on every consume: a copy for the caller (Assignments) against
// a walk of the cached list (EachAssignment).
func BenchmarkTopicAssignments(b *testing.B) {
	n := benchNode(b, b.TempDir())
	defer n.stop()
	ctx := context.Background()
	if _, err := n.store.Propose(ctx, createTopic("t", 1)); err != nil {
		b.Fatal(err)
	}
	for p := range int32(3) {
		if _, err := n.store.Propose(ctx, env(&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: topicID(1), Partition: p, Owner: "bench"})); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows, err := n.store.Assignments("t")
			if err != nil || len(rows) != 3 {
				b.Fatalf("%d rows, %v", len(rows), err)
			}
		}
	})
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			rows := 0
			if err := n.store.EachAssignment("t", func(meta.Assignment) { rows++ }); err != nil || rows != 3 {
				b.Fatalf("%d rows, %v", rows, err)
			}
		}
	})
}

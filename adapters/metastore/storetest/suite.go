package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Store is what the suite needs: the port plus membership changes.
type Store interface {
	ports.MetadataStore
}

// Run runs every contract test; newStore returns a fresh single-replica
// store that leads (or will lead shortly) and is cleaned up by the test.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"propose_then_read_on_same_node", testProposeThenRead},
		{"refusal_is_applied_and_journaled", testRefusalApplied},
		{"invalid_event_is_refused_before_proposing", testInvalidRefused},
		{"list_topics_pages_by_name", testListPaging},
		{"watch_delivers_applied_entries_in_order", testWatch},
		{"barrier_leads_to_caught_up", testBarrierCaughtUp},
		{"every_view_reads_back", testEveryView},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

// Ctx returns a context bounded by d, cancelled with the test.
func Ctx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls cond every 10 ms until it holds or timeout passes.
func Eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TopicID returns a valid incarnation id derived from n.
func TopicID(n int) string { return fmt.Sprintf("%016x", n) }

// CreateTopic returns a valid create entry for name.
func CreateTopic(name string, n int) meta.Envelope {
	return meta.Envelope{Actor: "test", AtMs: 1_700_000_000_000, Event: &meta.CreateTopic{
		Name: name, ID: TopicID(n), Partitions: 3, VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024,
	}}
}

// MustPropose proposes env and fails the test on an error.
func MustPropose(t *testing.T, s ports.MetadataProposer, env meta.Envelope) ports.MetaApplied {
	t.Helper()
	got, err := s.Propose(Ctx(t, 10*time.Second), env)
	if err != nil {
		t.Fatalf("propose %s: %v", env.Event.Type(), err)
	}
	return got
}

func testProposeThenRead(t *testing.T, s Store) {
	got := MustPropose(t, s, CreateTopic("orders", 1))
	if !got.Result.OK() || got.Index == 0 {
		t.Fatalf("outcome %+v", got)
	}
	tp, ok, err := s.Topic("orders")
	if err != nil || !ok || tp.ID != TopicID(1) || tp.Partitions != 3 {
		t.Fatalf("Topic = %+v, %v, %v", tp, ok, err)
	}
	if s.AppliedIndex() < got.Index {
		t.Fatalf("AppliedIndex %d below the proposal's %d", s.AppliedIndex(), got.Index)
	}
}

func testRefusalApplied(t *testing.T, s Store) {
	first := MustPropose(t, s, CreateTopic("orders", 1))
	second := MustPropose(t, s, CreateTopic("orders", 2))
	if second.Result.Code != meta.CodeExists || second.Index <= first.Index {
		t.Fatalf("second create %+v after %+v", second, first)
	}
	if !errors.Is(second.Result.Err(), meta.ErrExists) {
		t.Fatalf("Err() = %v", second.Result.Err())
	}
	h, err := s.History(0, 2)
	if err != nil || len(h) != 2 {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if h[0].Index != second.Index || h[0].Code != meta.CodeExists || h[1].Index != first.Index || h[1].Code != meta.CodeOK {
		t.Fatalf("History newest first = %+v", h)
	}
	if h[0].Actor != "test" || h[0].Type != meta.TypeCreateTopic || h[0].Subject != "topic orders" {
		t.Fatalf("History entry %+v", h[0])
	}
}

func testInvalidRefused(t *testing.T, s Store) {
	before := s.AppliedIndex()
	_, err := s.Propose(Ctx(t, 5*time.Second), meta.Envelope{Event: &meta.CreateTopic{Name: "bad/name"}})
	if !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("Propose = %v, want ErrInvalidEvent", err)
	}
	if s.AppliedIndex() != before {
		t.Fatalf("an invalid event reached the log: applied %d → %d", before, s.AppliedIndex())
	}
}

func testListPaging(t *testing.T, s Store) {
	for i, name := range []string{"e", "a", "d", "b", "c"} {
		MustPropose(t, s, CreateTopic(name, i+1))
	}
	var seen []string
	after := ""
	for page := 0; page < 5; page++ {
		got, err := s.ListTopics(after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		for _, tp := range got {
			seen = append(seen, tp.Name)
		}
		after = got[len(got)-1].Name
	}
	if fmt.Sprint(seen) != "[a b c d e]" {
		t.Fatalf("pages gave %v", seen)
	}
	all, err := s.ListTopics("", 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("ListTopics all = %d, %v", len(all), err)
	}
}

func testWatch(t *testing.T, s Store) {
	sub, err := s.Watch(16)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var want []uint64
	for i := 1; i <= 3; i++ {
		want = append(want, MustPropose(t, s, CreateTopic(fmt.Sprintf("w%d", i), i)).Index)
	}
	MustPropose(t, s, CreateTopic("w1", 9))
	timeout := time.After(10 * time.Second)
	for i := 0; i < 4; i++ {
		select {
		case c := <-sub.C():
			if i < 3 && (c.Index != want[i] || !c.Result.OK() || c.Envelope.Event.Type() != meta.TypeCreateTopic) {
				t.Fatalf("change %d = %+v, want index %d", i, c, want[i])
			}
			if i == 3 && c.Result.Code != meta.CodeExists {
				t.Fatalf("refusal not watched: %+v", c)
			}
		case <-timeout:
			t.Fatalf("only %d changes arrived", i)
		}
	}
	sub.Close()
	if sub.Err() != nil {
		t.Fatalf("Err after Close = %v", sub.Err())
	}
}

func testBarrierCaughtUp(t *testing.T, s Store) {
	MustPropose(t, s, CreateTopic("b", 1))
	if err := s.Barrier(Ctx(t, 10*time.Second)); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
	Eventually(t, 10*time.Second, "caught up", s.CaughtUp)
	Eventually(t, 10*time.Second, "leadership", s.IsLeader)
	if _, ok := s.Leader(); !ok {
		t.Fatal("leader unknown on the leader")
	}
}

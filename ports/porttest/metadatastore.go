package porttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// msWait bounds every wait of the MetadataStore suite.
const msWait = 10 * time.Second

// MetadataStore runs the ports.MetadataStore conformance suite. newStore
// returns a fresh single-replica store that leads (or will lead shortly)
// and is cleaned up by the test.
func MetadataStore(t *testing.T, newStore func(t *testing.T) ports.MetadataStore) {
	cases := []struct {
		name string
		run  func(t *testing.T, s ports.MetadataStore)
	}{
		{"propose_then_read_on_same_node", msProposeThenRead},
		{"refusal_is_applied_and_journaled", msRefusalApplied},
		{"invalid_event_is_refused_before_proposing", msInvalidRefused},
		{"list_topics_pages_by_name", msListPaging},
		{"watch_delivers_applied_entries_in_order", msWatch},
		{"barrier_leads_to_caught_up", msBarrierCaughtUp},
		{"every_view_reads_back", msEveryView},
		{"remote_child_lives_and_dies_with_its_link", msRemoteChild},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

func msCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), msWait)
	t.Cleanup(cancel)
	return ctx
}

// msEventually polls cond every 10 ms until it holds or msWait passes.
func msEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(msWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", msWait, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func msID(n int) string { return fmt.Sprintf("%016x", n) }

func msCreate(name string, n int) meta.Envelope {
	return meta.Envelope{Actor: "test", AtMs: 1_700_000_000_000, Event: &meta.CreateTopic{
		Name: name, ID: msID(n), Partitions: 3, VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024,
	}}
}

func msPropose(t *testing.T, s ports.MetadataProposer, env meta.Envelope) ports.MetaApplied {
	t.Helper()
	got, err := s.Propose(msCtx(t), env)
	if err != nil {
		t.Fatalf("propose %s: %v", env.Event.Type(), err)
	}
	return got
}

// msProposeOK proposes every event and fails the test on a refusal.
func msProposeOK(t *testing.T, s ports.MetadataProposer, events ...meta.Event) {
	t.Helper()
	for _, ev := range events {
		if got := msPropose(t, s, meta.Envelope{Actor: "admin", AtMs: 1_700_000_000_000, Event: ev}); !got.Result.OK() {
			t.Fatalf("%s %s: %v", ev.Type(), ev.Subject(), got.Result)
		}
	}
}

func msProposeThenRead(t *testing.T, s ports.MetadataStore) {
	got := msPropose(t, s, msCreate("orders", 1))
	if !got.Result.OK() || got.Index == 0 {
		t.Fatalf("outcome %+v", got)
	}
	tp, ok, err := s.Topic("orders")
	if err != nil || !ok || tp.ID != msID(1) || tp.Partitions != 3 {
		t.Fatalf("Topic = %+v, %v, %v", tp, ok, err)
	}
	if s.AppliedIndex() < got.Index {
		t.Fatalf("AppliedIndex %d below the proposal's %d", s.AppliedIndex(), got.Index)
	}
}

func msRefusalApplied(t *testing.T, s ports.MetadataStore) {
	first := msPropose(t, s, msCreate("orders", 1))
	second := msPropose(t, s, msCreate("orders", 2))
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

func msInvalidRefused(t *testing.T, s ports.MetadataStore) {
	before := s.AppliedIndex()
	_, err := s.Propose(msCtx(t), meta.Envelope{Event: &meta.CreateTopic{Name: "bad/name"}})
	if !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("Propose = %v, want ErrInvalidEvent", err)
	}
	if _, err := s.Propose(msCtx(t), meta.Envelope{}); !errors.Is(err, meta.ErrInvalidEvent) {
		t.Fatalf("Propose(nil event) = %v, want ErrInvalidEvent", err)
	}
	if s.AppliedIndex() != before {
		t.Fatalf("an invalid event reached the log: applied %d → %d", before, s.AppliedIndex())
	}
}

func msListPaging(t *testing.T, s ports.MetadataStore) {
	for i, name := range []string{"e", "a", "d", "b", "c"} {
		msPropose(t, s, msCreate(name, i+1))
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

func msWatch(t *testing.T, s ports.MetadataStore) {
	sub, err := s.Watch(16)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var want []uint64
	for i := 1; i <= 3; i++ {
		want = append(want, msPropose(t, s, msCreate(fmt.Sprintf("w%d", i), i)).Index)
	}
	msPropose(t, s, msCreate("w1", 9))
	timeout := time.After(msWait)
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

func msBarrierCaughtUp(t *testing.T, s ports.MetadataStore) {
	msPropose(t, s, msCreate("b", 1))
	if err := s.Barrier(msCtx(t)); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
	msEventually(t, "caught up", s.CaughtUp)
	msEventually(t, "leadership", s.IsLeader)
	if _, ok := s.Leader(); !ok {
		t.Fatal("leader unknown on the leader")
	}
}

func msRemote() *meta.PutRemote {
	return &meta.PutRemote{Name: "dr", ID: msID(9), URL: "https://dr.example.com", Username: "r", Salt: make([]byte, 32),
		Credential: meta.RemoteCredential{SealedPassword: []byte("s"), KeyVersion: msID(3), Fingerprint: "0123456789ab"},
		Limits: meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000,
			CheckIntervalMs: 10000, Compression: "none"}}
}

// msCheck fails the test unless a read succeeded and said what it should.
func msCheck(t *testing.T, what string, ok bool, err error) {
	t.Helper()
	if err != nil || !ok {
		t.Fatalf("%s: ok=%v err=%v", what, ok, err)
	}
}

func msEveryView(t *testing.T, s ports.MetadataStore) {
	msProposeOK(t, s,
		&meta.MemberJoin{ID: "n1", Addr: "127.0.0.1:7942", ClusterAddr: "127.0.0.1:7943", EntryTypes: meta.AppliesThroughType},
		&meta.MemberJoin{ID: "n2", Addr: "127.0.0.2:7942", ClusterAddr: "127.0.0.2:7943"},
		&meta.RemoveMember{ID: "n2"},
		&meta.CreateTopic{Name: "p", ID: msID(1), Partitions: 2, VisibilityTimeoutMs: 1},
		&meta.CreateTopic{Name: "c", ID: msID(2), Partitions: 2, VisibilityTimeoutMs: 1},
		&meta.PutSchema{Topic: "p", Version: 1, Schema: []byte(`{"type":"object"}`)},
		&meta.AttachChild{Parent: "p", Child: "c", Epoch: msID(7), Offsets: []int64{1, 2}},
		&meta.AssignPartitionIfAbsent{Topic: "p", TopicID: msID(1), Partition: 1, Owner: "n1"},
		&meta.SetAssignmentTarget{Topic: "p", Partition: 1, Target: "n3"},
		&meta.CreateUser{Username: "alice", PasswordHash: []byte("h")},
		msRemote(),
	)
	members, err := s.Members()
	msCheck(t, "members", len(members) == 1 && members[0].ID == "n1" && members[0].EntryTypes == meta.AppliesThroughType, err)
	tombs, err := s.Tombstones()
	msCheck(t, "tombstones", len(tombs) == 1 && tombs[0].ID == "n2", err)
	schemas, err := s.Schemas("c")
	msCheck(t, "adopted schema", len(schemas) == 1, err)
	links, err := s.Links()
	msCheck(t, "links", len(links) == 1 && links[0].Parent == "p" && links[0].Child == "c" && links[0].Remote == nil, err)
	rows, err := s.Assignments("p")
	msCheck(t, "assignments", len(rows) == 1 && rows[0].Owner == "n1", err)
	var walked []meta.Assignment
	err = s.EachAssignment("p", func(a meta.Assignment) { walked = append(walked, a) })
	msCheck(t, "each assignment", slices.Equal(walked, rows), err)
	err = s.EachAssignment("nope", func(meta.Assignment) { t.Error("a row of a topic without rows") })
	msCheck(t, "each assignment of an unknown topic", true, err)
	row, ok, err := s.Assignment("p", 1)
	msCheck(t, "assignment", ok && row.Target == "n3", err)
	moves, err := s.Moves()
	msCheck(t, "moves", len(moves) == 1 && moves[0].From == "n1" && moves[0].To == "n3", err)
	u, ok, err := s.User("alice")
	msCheck(t, "user", ok && string(u.PasswordHash) == "h", err)
	users, err := s.Users()
	msCheck(t, "users", len(users) == 1, err)
	remotes, err := s.Remotes()
	msCheck(t, "remotes", len(remotes) == 1 && remotes[0].CredentialVersion == 1, err)
	seals, err := s.RemoteKeySeals(msID(3))
	msCheck(t, "seals of the remote's key", seals == 1, err)
	seals, err = s.RemoteKeySeals(msID(4))
	msCheck(t, "seals of a key that never sealed", seals == 0, err)
}

// msRemoteChild: entry types 33 and 34 through the store. A remote attach
// creates a partition-less stub with its link; a pause shows on the stub;
// deleting the parent removes the stub in the same entry.
func msRemoteChild(t *testing.T, s ports.MetadataStore) {
	msProposeOK(t, s,
		msRemote(),
		&meta.CreateTopic{Name: "p", ID: msID(1), Partitions: 2, VisibilityTimeoutMs: 1},
		&meta.AttachRemoteChild{Parent: "p", ParentID: msID(1), Child: "p-dr", ChildID: msID(2), Epoch: msID(7),
			Offsets: []int64{3, 4}, Remote: "dr", RemoteID: msID(9), RemoteTopic: "p", From: meta.RemoteFromAttach, Lanes: 1},
		&meta.SetRemoteChildState{Parent: "p", Child: "p-dr", ChildID: msID(2), Op: meta.RemoteOpPause, Reason: "maintenance"},
	)
	stub, ok, err := s.Topic("p-dr")
	msCheck(t, "stub", ok && stub.IsRemoteStub() && stub.Partitions == 0 && stub.Parent == "p", err)
	if l := stub.Remote; l.Name != "dr" || l.Topic != "p" || !l.Paused || l.PauseReason != "maintenance" || l.PausedBy != "admin" {
		t.Fatalf("stub link %+v", l)
	}
	links, err := s.Links()
	msCheck(t, "remote link", len(links) == 1 && links[0].Remote != nil && links[0].Remote.Name == "dr", err)
	msProposeOK(t, s, &meta.DeleteTopicIf{Name: "p", ID: msID(1)})
	if _, ok, err := s.Topic("p-dr"); ok || err != nil {
		t.Fatalf("stub outlived its parent: ok=%v err=%v", ok, err)
	}
}

package controller_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/controller"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// statusPeers answers NodeStatus from a table; a missing node errs.
type statusPeers struct {
	mu      sync.Mutex
	backlog map[string]uint64
	asked   []string
}

func (s *statusPeers) NodeStatus(_ context.Context, node string) (ports.NodeStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, node)
	b, ok := s.backlog[node]
	if !ok {
		return ports.NodeStatus{}, errors.New("no answer")
	}
	return ports.NodeStatus{Node: node, DispatchBacklog: b}, nil
}

func (s *statusPeers) set(node string, backlog uint64) {
	s.mu.Lock()
	s.backlog[node] = backlog
	s.mu.Unlock()
}

// retireFixture is a leading controller on n1 with Raft voters n1..n4 and
// NodeStatus answered by peers.
func retireFixture(t *testing.T) (*fixture, *statusPeers) {
	t.Helper()
	f := newFixture(t, "n1", "n2", "n3", "n4")
	f.voters(t, "n1", "n2", "n3", "n4")
	peers := &statusPeers{backlog: map[string]uint64{}}
	f.ctl = controller.New(controller.Deps{Store: f.store, Clock: f.clock, Log: discard(), Self: self, Status: peers, Transfer: f.store})
	return f, peers
}

func (f *fixture) raftHas(t *testing.T, id string) bool {
	t.Helper()
	cfg, err := f.store.Membership(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, v := cfg.Voters[meta.ReplicaID(id)]
	_, nv := cfg.NonVoters[meta.ReplicaID(id)]
	return v || nv
}

func tombstoned(t *testing.T, s *fake.MetaStore, id string) bool {
	t.Helper()
	ts, err := s.Tombstones()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.ID == id {
			return true
		}
	}
	return false
}

// Ensure that the leader removes a draining member (internals.md §9.5)
// only once it owns nothing, is the target of no move and reports an
// empty dispatch backlog: its Raft server first, then its member record
// with a tombstone; and that an unreadable status keeps it.
func TestRetireRemovesAnEmptyDrainedMember(t *testing.T) {
	t.Parallel()
	f, peers := retireFixture(t)
	f.topic(t, "t", "00000000000000a1", 1)
	f.commit(t, startTime, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Owner: "n4"})
	f.commit(t, startTime, &meta.SetMemberDraining{ID: "n4", Draining: true})
	peers.set("n4", 0)
	f.tick(t)
	if f.status(t, "n4") == "absent" || !f.raftHas(t, "n4") {
		t.Fatal("a draining member that owns a partition was removed")
	}
	f.commit(t, startTime, &meta.AssignPartition{Topic: "t", Partition: 0, Owner: "n2"})
	f.commit(t, startTime, &meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Target: "n4"})
	f.tick(t)
	if f.status(t, "n4") == "absent" {
		t.Fatal("a draining member that a move targets was removed")
	}
	f.commit(t, startTime, &meta.AbortMove{Topic: "t", TopicID: "00000000000000a1", Partition: 0, ExpectedTarget: "n4"})

	peers.set("n4", 7)
	f.tick(t)
	if f.status(t, "n4") == "absent" || !f.raftHas(t, "n4") {
		t.Fatal("a member with a dispatch backlog was removed")
	}
	delete(peers.backlog, "n4")
	if err := f.ctl.Tick(context.Background()); err == nil || f.status(t, "n4") == "absent" {
		t.Fatalf("an unreadable status: %v, member %s", err, f.status(t, "n4"))
	}
	peers.set("n4", 0)
	f.tick(t)
	if f.status(t, "n4") != "absent" || f.raftHas(t, "n4") || !tombstoned(t, f.store.MetaStore, "n4") {
		t.Fatalf("after the backlog emptied: member %s, raft %v", f.status(t, "n4"), f.raftHas(t, "n4"))
	}
}

// Ensure that a drained voter of a three-voter cluster stays (MinVoters),
// and that a drained leader hands the leadership on instead of removing
// itself.
func TestRetireKeepsThreeVotersAndMovesLeadershipFirst(t *testing.T) {
	t.Parallel()
	f, peers := retireFixture(t)
	if err := f.store.RemoveReplica(context.Background(), meta.ReplicaID("n4")); err != nil {
		t.Fatal(err)
	}
	f.commit(t, startTime, &meta.SetMemberDraining{ID: "n3", Draining: true})
	peers.set("n3", 0)
	f.tick(t)
	if !f.raftHas(t, "n3") || f.status(t, "n3") == "absent" {
		t.Fatal("a drained voter was removed from three voters")
	}

	g, _ := retireFixture(t)
	g.commit(t, startTime, &meta.SetMemberDraining{ID: self, Draining: true})
	g.tick(t)
	if got := g.store.Transfers(); len(got) != 1 || got[0] == meta.ReplicaID(self) {
		t.Fatalf("leadership transfers %v, want one to another voter", got)
	}
	if !g.raftHas(t, self) || g.status(t, self) == "absent" {
		t.Fatal("the drained leader removed itself")
	}
}

package metastore

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a voter whose data directory is wiped and that comes back
// under its node id, the way bootstrap does it (its empty-volume probe is a
// JoinCluster with an empty data directory, answered "voter", then a
// join-only start as a voter; internals §9.2, §9.3), catches up instead of
// stopping in Raft: the leader still held the voter's old match index, and
// its heartbeat commit would be past the empty log's end. The leader hands
// the leadership over before answering, so the cluster stays one cluster
// of 3 voters with everything created before and after the wipe.
func TestWipedVoterRejoinsWithoutStopping(t *testing.T) {
	nodes := startCluster(t, 3, StoreConfig{})
	members := map[string]string{}
	for _, n := range nodes {
		members[n.id] = n.addr
	}
	leader := leaderOf(t, nodes...)
	mustPropose(t, leader.store, createTopic("before-wipe", 1))
	for _, n := range nodes {
		mustPropose(t, leader.store, meta.Envelope{AtMs: 1, Event: &meta.MemberJoin{ID: n.id, Addr: "127.0.0.1:1", ClusterAddr: n.addr}})
	}
	sameViews(t, nodes...) // every follower's match index is well past 0

	var wiped, other *node
	for _, n := range nodes {
		switch {
		case n == leader:
		case wiped == nil:
			wiped = n
		default:
			other = n
		}
	}
	wiped.stop()
	if err := os.RemoveAll(wiped.dir); err != nil {
		t.Fatal(err)
	}
	mustPropose(t, leader.store, createTopic("while-wiped", 2))

	// The leader led for moments only; a clock 13 s ahead lets the 12 s
	// tenure rule (tested in application/membership) pass at once.
	admit := membership.NewAdmitter(leader.store, membership.DefaultMaxVoters, membership.WithClock(aheadClock{13 * time.Second}))
	got := admitRetrying(t, admit, membership.Join{NodeID: wiped.id, RaftAddr: wiped.addr, DataDirEmpty: true})
	if got.Status != membership.StatusVoter {
		t.Fatalf("rejoin answered %+v, want voter", got)
	}
	if leader.store.IsLeader() {
		id, term, _, _ := leader.host.nh.GetLeaderID(metadataShardID)
		t.Fatalf("the leader answered before handing its leadership over: leader %d term %d", id, term)
	}

	back := startNode(t, wiped.id, wiped.addr, wiped.dir, StoreConfig{InitialMembers: members, Join: true, JoinAsVoter: true})
	waitFor(t, 20*time.Second, "the wiped voter to catch up", func() bool {
		_, a, _ := back.store.Topic("before-wipe")
		_, b, _ := back.store.Topic("while-wiped")
		return a && b
	})
	next := leaderOf(t, leader, other, back)
	mustPropose(t, next.store, createTopic("after-wipe", 3))
	waitFor(t, 20*time.Second, "the wiped voter to follow", func() bool {
		_, ok, _ := back.store.Topic("after-wipe")
		return ok
	})
	live := []*node{leader, other, back}
	sameViews(t, live...)
	m, err := next.store.Membership(ctxFor(t, 10*time.Second))
	if err != nil || len(m.Voters) != 3 || len(m.NonVoters) != 0 {
		t.Fatalf("membership %+v, %v; want 3 voters", m, err)
	}
	waitFor(t, 20*time.Second, "the wiped voter's role to be recorded", func() bool {
		role, err := readRole(back.host.rolePath())
		return err == nil && role == roleVoter
	})
}

// Ensure that only the leader hands its leadership over, and never to
// itself, and that a hand-over returns once a leader of a later term leads.
func TestTransferLeadershipWaitsForALaterTerm(t *testing.T) {
	nodes := startCluster(t, 3, StoreConfig{})
	leader := leaderOf(t, nodes...)
	var follower *node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	if err := follower.store.TransferLeadership(ctxFor(t, time.Second), leader.store.replicaID); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("transfer from a follower: %v, want ErrUnavailable", err)
	}
	if err := leader.store.TransferLeadership(ctxFor(t, time.Second), leader.store.replicaID); !errors.Is(err, meta.ErrRefused) {
		t.Fatalf("transfer to itself: %v, want ErrRefused", err)
	}
	_, before, _, _ := leader.host.nh.GetLeaderID(metadataShardID)
	waitFor(t, 20*time.Second, "a hand-over to complete", func() bool {
		err := leader.store.TransferLeadership(ctxFor(t, 2*time.Second), follower.store.replicaID)
		return err == nil || !leader.store.IsLeader() // a hand-over may complete after its wait ran out
	})
	var id, after uint64
	var valid bool
	var err error
	waitFor(t, 5*time.Second, "a leader of a later term", func() bool {
		id, after, valid, err = leader.host.nh.GetLeaderID(metadataShardID)
		return err == nil && valid && after > before
	})
	if err != nil || !valid || after <= before || id == leader.store.replicaID {
		t.Fatalf("after the hand-over: leader %d term %d (was %d) valid %v err %v", id, after, before, valid, err)
	}
}

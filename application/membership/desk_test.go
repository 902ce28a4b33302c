package membership_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// deskStore is a fake replica whose admission and known leader a test sets.
type deskStore struct {
	*fake.MetaStore
	admitted bool
	leader   string // node id of the leader this replica knows; "" unknown
}

func (d deskStore) Admitted() bool { return d.admitted }

func (d deskStore) Leader() (uint64, bool) {
	if d.leader == "" {
		return 0, false
	}
	return meta.ReplicaID(d.leader), true
}

func joinReq(n string) ports.JoinRequest {
	return ports.JoinRequest{NodeID: n, RaftAddr: n + ":7943", EntryTypes: meta.AppliesThroughType}
}

// Ensure that the desk answers each case of internals §9.3: the leader
// stages (200), a configured follower names the leader's id and node-RPC
// address (421), a node waiting to be admitted itself answers 412.
func TestDeskAnswersPerRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seeded(t)
	register(t, s, memberJoin(1))
	desk := func(ds deskStore) *membership.Desk {
		return membership.NewDesk(ds, membership.NewAdmitter(ds, membership.LargeMaxVoters))
	}

	got, err := desk(deskStore{MetaStore: s, admitted: true, leader: "n1"}).AnswerJoin(ctx, joinReq("n4"))
	if err != nil || got.Status != ports.JoinStaged {
		t.Fatalf("leader: %+v, %v", got, err)
	}

	follower := fake.NewMetaStore()
	follower.SetLeader(false)
	register(t, follower, memberJoin(1))
	_, err = desk(deskStore{MetaStore: follower, admitted: true, leader: "n1"}).AnswerJoin(ctx, joinReq("n4"))
	var nl *domain.NotLeaderError
	if !errors.As(err, &nl) || nl.LeaderID != "n1" || nl.LeaderAddr != "10.0.0.1:7942" {
		t.Fatalf("follower: %v", err)
	}
	for name, leader := range map[string]string{"leader_unknown": "", "leader_unregistered": "n7"} {
		_, err = desk(deskStore{MetaStore: follower, admitted: true, leader: leader}).AnswerJoin(ctx, joinReq("n4"))
		if !errors.As(err, &nl) || *nl != (domain.NotLeaderError{}) {
			t.Fatalf("%s: %v", name, err)
		}
	}

	_, err = desk(deskStore{MetaStore: s, admitted: false}).AnswerJoin(ctx, joinReq("n5"))
	if !errors.Is(err, domain.ErrNoCluster) {
		t.Fatalf("waiting joiner: %v", err)
	}
}

// Ensure that admission refusals become the join's domain errors: removed
// id → tombstoned (409), older release (409), bad request (400), a store
// failure → unavailable (503).
func TestDeskMapsRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := registered(t, map[string]meta.EntryType{"n1": meta.AppliesThroughType})
	d := membership.NewDesk(deskStore{MetaStore: s, admitted: true, leader: "n1"}, membership.NewAdmitter(s, membership.DefaultMaxVoters))
	if err := s.RemoveReplica(ctx, meta.ReplicaID("n9")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		req  ports.JoinRequest
		want error
	}{
		"removed":       {joinReq("n9"), domain.ErrJoinTombstoned},
		"older_release": {ports.JoinRequest{NodeID: "n4", RaftAddr: "n4:7943"}, domain.ErrOlderRelease},
		"bad_request":   {ports.JoinRequest{NodeID: "n4"}, domain.ErrInvalidArgument},
	}
	for name, tc := range cases {
		if _, err := d.AnswerJoin(ctx, tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	s.FailMembership(meta.ErrUnavailable)
	if _, err := d.AnswerJoin(ctx, joinReq("n4")); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("store failure: %v", err)
	}
}

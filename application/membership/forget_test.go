package membership_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that forget (api.md §2.17, conformance 236) refuses the leader
// (invalid argument), an id no Raft server has (not found), a server with a
// member record or named by an assignment, and a voter whose removal could
// leave no quorum (conflict); and removes a recordless server.
func TestForgetRefusesWhatItMustAndRemovesTheRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	s := voters(t, 3, "n1")
	s.SetLeader(true)
	s.SetLeaderSince(now.Add(-time.Minute))
	for _, id := range []string{"ghost", "ghost2"} {
		if err := s.AddNonVoter(ctx, meta.ReplicaID(id), id+":7943"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddVoter(ctx, meta.ReplicaID("gvoter"), "gvoter:7943"); err != nil {
		t.Fatal(err)
	}
	register(t, s, &meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Target: "ghost2"})
	f := membership.NewForgetter(deskStore{MetaStore: s, admitted: true, leader: "n1"}, fixedClock(now))
	for _, c := range []struct {
		id   string
		want error
	}{
		{"n1", domain.ErrInvalidArgument},
		{"nobody", domain.ErrMemberNotFound},
		{"n2", domain.ErrConflict},     // has a member record
		{"ghost2", domain.ErrConflict}, // a move targets it
	} {
		if _, err := f.Forget(ctx, c.id); !errors.Is(err, c.want) {
			t.Fatalf("forget %s: %v, want %v", c.id, err, c.want)
		}
	}
	got, err := f.Forget(ctx, "ghost")
	if err != nil || got != (membership.Forgotten{ID: "ghost", Voter: false}) {
		t.Fatalf("forget ghost: %+v, %v", got, err)
	}
	cfg, _ := s.Membership(ctx)
	if _, still := cfg.NonVoters[meta.ReplicaID("ghost")]; still {
		t.Fatal("ghost is still a non-voter")
	}
	// A voter: refused while two of the three voters left are dead.
	register(t, s, &meta.MemberDead{ID: "n2"}, &meta.MemberDead{ID: "n3"})
	if _, err := f.Forget(ctx, "gvoter"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("forget a voter without a quorum left: %v", err)
	}
	register(t, s, memberJoin(2), memberJoin(3)) // heartbeats revive them
	s.SetLeaderSince(now.Add(-time.Second))
	if _, err := f.Forget(ctx, "gvoter"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("forget a voter on a fresh leader: %v", err)
	}
	s.SetLeaderSince(now.Add(-time.Minute))
	if got, err := f.Forget(ctx, "gvoter"); err != nil || !got.Voter {
		t.Fatalf("forget gvoter: %+v, %v", got, err)
	}
}

package membership_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// noConfig is a replica that cannot read the Raft configuration (no leader).
type noConfig struct{ *fake.MetaStore }

func (noConfig) Membership(context.Context) (ports.RaftMembership, error) {
	return ports.RaftMembership{}, meta.ErrUnavailable
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// Ensure that the members listing (api.md §2.17) shows every record sorted
// by id, dead ones included, with owned partitions and outbound moves
// counted from the placement, voter and leader from Raft, and the age of
// the last heartbeat.
func TestRosterListsMembers(t *testing.T) {
	t.Parallel()
	s := seeded(t) // n1 voter
	ctx := context.Background()
	if err := s.AddNonVoter(ctx, meta.ReplicaID("n2"), "10.0.0.2:7943"); err != nil {
		t.Fatal(err)
	}
	register(t, s, memberJoin(2), memberJoin(1), memberJoin(3), &meta.MemberDead{ID: "n3"},
		&meta.CreateTopic{Name: "t", ID: "00000000000000a1", Partitions: 3, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Owner: "n1"},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 2, Owner: "n2"},
		&meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Target: "n2"},
	)
	now := time.UnixMilli(1_700_000_000_000).Add(7 * time.Second)
	got, err := membership.NewRoster(deskStore{MetaStore: s, admitted: true, leader: "n1"}, fixedClock(now)).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []membership.MemberView{
		{ID: "n1", Addr: "10.0.0.1:7942", Status: "alive", OwnedPartitions: 2, OutboundMoves: 1, Voter: true, Leader: true, HeartbeatAgeSeconds: 7},
		{ID: "n2", Addr: "10.0.0.2:7942", Status: "alive", OwnedPartitions: 1, HeartbeatAgeSeconds: 7},
		{ID: "n3", Addr: "10.0.0.3:7942", Status: "dead", HeartbeatAgeSeconds: 7},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if _, err := membership.NewRoster(noConfig{s}, fixedClock(now)).List(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("no configuration: %v", err)
	}
}

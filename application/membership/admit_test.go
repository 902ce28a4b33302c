package membership_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain/meta"
)

func join(n int) membership.Join {
	return membership.Join{NodeID: fmt.Sprintf("n%d", n), RaftAddr: fmt.Sprintf("10.0.0.%d:7943", n)}
}

// Ensure that joiners become voters until the target count, then are staged
// as non-voters, and that a repeated join is answered as it stands.
func TestAdmitGrowsVotersThenStages(t *testing.T) {
	t.Parallel()
	for _, max := range []int{membership.DefaultMaxVoters, membership.LargeMaxVoters} {
		t.Run(fmt.Sprintf("max_%d", max), func(t *testing.T) {
			s := fake.NewMetaStore()
			a := membership.NewAdmitter(s, max)
			ctx := context.Background()
			for i := 1; i <= max+2; i++ {
				want := membership.StatusVoter
				if i > max {
					want = membership.StatusStaged
				}
				if got, err := a.Admit(ctx, join(i)); err != nil || got != want {
					t.Fatalf("join %d: %q, %v; want %q", i, got, err, want)
				}
			}
			if got, _ := a.Admit(ctx, join(1)); got != membership.StatusVoter {
				t.Fatalf("repeated voter join: %q", got)
			}
			if got, _ := a.Admit(ctx, join(max+1)); got != membership.StatusDeferred {
				t.Fatalf("repeated staged join with no room: %q", got)
			}
			m, _ := s.Membership(ctx)
			if len(m.Voters) != max || len(m.NonVoters) != 2 {
				t.Fatalf("membership %+v", m)
			}
		})
	}
}

// Ensure that a staged node is promoted once a voter left room for it.
func TestAdmitPromotesWhenRoomOpens(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		if _, err := a.Admit(ctx, join(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RemoveReplica(ctx, meta.ReplicaID("n2")); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Admit(ctx, join(4)); err != nil || got != membership.StatusPromoted {
		t.Fatalf("promotion: %q, %v", got, err)
	}
	m, _ := s.Membership(ctx)
	if _, ok := m.Voters[meta.ReplicaID("n4")]; !ok || len(m.NonVoters) != 0 {
		t.Fatalf("membership %+v", m)
	}
}

// Ensure that only the leader admits, removed ids stay out, bad requests
// and store failures surface as errors.
func TestAdmitRefusals(t *testing.T) {
	t.Parallel()
	s := fake.NewMetaStore()
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
	ctx := context.Background()
	if _, err := a.Admit(ctx, membership.Join{NodeID: "n1"}); !errors.Is(err, membership.ErrBadRequest) {
		t.Fatalf("no address: %v", err)
	}
	if err := s.RemoveReplica(ctx, meta.ReplicaID("n9")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Admit(ctx, join(9)); !errors.Is(err, membership.ErrRemoved) {
		t.Fatalf("removed id: %v", err)
	}
	s.FailMembership(meta.ErrUnavailable)
	if _, err := a.Admit(ctx, join(1)); !errors.Is(err, meta.ErrUnavailable) {
		t.Fatalf("store failure: %v", err)
	}
	s.SetLeader(false)
	if _, err := a.Admit(ctx, join(1)); !errors.Is(err, membership.ErrNotLeader) {
		t.Fatalf("follower: %v", err)
	}
}

// Ensure that the constructor rejects bad wiring.
func TestNewAdmitterRejectsBadWiring(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"nil_store":  func() { membership.NewAdmitter(nil, 3) },
		"four_votes": func() { membership.NewAdmitter(fake.NewMetaStore(), 4) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

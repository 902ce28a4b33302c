package membership_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// decommissioned returns a fake leader on which n5 was a member and was
// decommissioned (its record removed and tombstoned).
func decommissioned(t *testing.T) (*membership.Admitter, func() bool) {
	t.Helper()
	s := seeded(t)
	register(t, s, memberJoin(5), &meta.RemoveMember{ID: "n5"})
	tombstoned := func() bool {
		tombs, err := s.Tombstones()
		if err != nil {
			t.Fatal(err)
		}
		return len(tombs) == 1 && tombs[0].ID == "n5"
	}
	if !tombstoned() {
		t.Fatal("setup: n5 not tombstoned")
	}
	return membership.NewAdmitter(s, membership.DefaultMaxVoters), tombstoned
}

// Ensure that a join under a tombstoned id is refused (409) while it keeps
// its data, and that one declaring an empty data directory is a
// deliberate re-add: the tombstone is cleared (type 20) and the node is
// staged as new (internals §9.5).
func TestAdmitReaddsTombstonedIdOnlyWithEmptyDataDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, tombstoned := decommissioned(t)
	if _, err := a.Admit(ctx, join(5)); !errors.Is(err, membership.ErrRemoved) || !tombstoned() {
		t.Fatalf("tombstoned id with its data: %v (tombstone kept: %v), want ErrRemoved", err, tombstoned())
	}
	empty := join(5)
	empty.DataDirEmpty = true
	got, err := a.Admit(ctx, empty)
	if err != nil || got.Status != membership.StatusStaged {
		t.Fatalf("tombstoned id, empty data dir: %+v, %v; want staged", got, err)
	}
	if tombstoned() {
		t.Fatal("the re-add left the tombstone")
	}
	if got, err := a.Admit(ctx, join(5)); err != nil || got.Status == "" {
		t.Fatalf("readmitted node asking again: %+v, %v", got, err)
	}
}

// Ensure that an id whose Raft replica was removed stays refused even with
// an empty data directory (dragonboat never takes a removed replica id
// back), and keeps its tombstone (internals §9.5).
func TestAdmitKeepsRaftRemovedIdOutEvenWhenEmpty(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seeded(t)
	register(t, s, memberJoin(5), &meta.RemoveMember{ID: "n5"})
	if err := s.RemoveReplica(ctx, meta.ReplicaID("n5")); err != nil {
		t.Fatal(err)
	}
	empty := join(5)
	empty.DataDirEmpty = true
	if _, err := membership.NewAdmitter(s, membership.DefaultMaxVoters).Admit(ctx, empty); !errors.Is(err, membership.ErrRemoved) {
		t.Fatalf("raft-removed id: %v, want ErrRemoved", err)
	}
	if tombs, _ := s.Tombstones(); len(tombs) != 1 {
		t.Fatalf("tombstones %+v, want n5's kept", tombs)
	}
}

// Ensure that the desk carries the join's empty-data-directory flag to the
// admitter: 409 tombstoned without it, staged with it (internals §9.5).
func TestDeskPassesEmptyDataDirToReadmission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := seeded(t)
	register(t, s, memberJoin(1), memberJoin(5), &meta.RemoveMember{ID: "n5"})
	ds := deskStore{MetaStore: s, admitted: true, leader: "n1"}
	desk := membership.NewDesk(ds, membership.NewAdmitter(ds, membership.DefaultMaxVoters))
	req := ports.JoinRequest{NodeID: "n5", RaftAddr: "10.0.0.5:7943", EntryTypes: meta.AppliesThroughType}
	if _, err := desk.AnswerJoin(ctx, req); !errors.Is(err, domain.ErrJoinTombstoned) {
		t.Fatalf("tombstoned join with data: %v", err)
	}
	req.DataDirEmpty = true
	if got, err := desk.AnswerJoin(ctx, req); err != nil || got.Status != ports.JoinStaged {
		t.Fatalf("tombstoned join, empty data dir: %+v, %v", got, err)
	}
}

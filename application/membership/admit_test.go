package membership_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain/meta"
)

func join(n int) membership.Join {
	return membership.Join{NodeID: fmt.Sprintf("n%d", n), RaftAddr: fmt.Sprintf("10.0.0.%d:7943", n)}
}

// seeded returns a fake leader whose shard has n1 as its only voter.
func seeded(t *testing.T) *fake.MetaStore {
	t.Helper()
	s := fake.NewMetaStore()
	if err := s.AddVoter(context.Background(), meta.ReplicaID("n1"), "10.0.0.1:7943"); err != nil {
		t.Fatal(err)
	}
	return s
}

// register commits member events as the joiner's heartbeater and the
// leader's controller would.
func register(t *testing.T, s *fake.MetaStore, evs ...meta.Event) {
	t.Helper()
	for _, ev := range evs {
		if _, err := s.Commit(meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
}

func memberJoin(n int) *meta.MemberJoin {
	return &meta.MemberJoin{ID: fmt.Sprintf("n%d", n), Addr: fmt.Sprintf("10.0.0.%d:7942", n), ClusterAddr: fmt.Sprintf("10.0.0.%d:7943", n)}
}

// Ensure that every new node is staged as a non-voter first, then promoted
// when it asks again with a live member record, until the voter target;
// past it, staged nodes are deferred with the reason; a repeated join is
// answered as it stands (internals §9.3).
func TestAdmitStagesThenPromotesUpToTheTarget(t *testing.T) {
	t.Parallel()
	for _, max := range []int{membership.DefaultMaxVoters, membership.LargeMaxVoters} {
		t.Run(fmt.Sprintf("max_%d", max), func(t *testing.T) {
			s := seeded(t)
			a := membership.NewAdmitter(s, max)
			ctx := context.Background()
			for i := 2; i <= max+2; i++ {
				if got, err := a.Admit(ctx, join(i)); err != nil || got.Status != membership.StatusStaged {
					t.Fatalf("first join of n%d: %+v, %v; want staged", i, got, err)
				}
				register(t, s, memberJoin(i))
				want := membership.StatusPromoted
				if i > max {
					want = membership.StatusDeferred
				}
				got, err := a.Admit(ctx, join(i))
				if err != nil || got.Status != want || (want == membership.StatusDeferred) != (got.Reason != "") {
					t.Fatalf("second join of n%d: %+v, %v; want %q", i, got, err, want)
				}
			}
			if got, _ := a.Admit(ctx, join(2)); got.Status != membership.StatusVoter {
				t.Fatalf("repeated voter join: %+v", got)
			}
			m, _ := s.Membership(ctx)
			if len(m.Voters) != max || len(m.NonVoters) != 2 {
				t.Fatalf("membership %+v", m)
			}
		})
	}
}

// Ensure that a staged node is not promoted without a member record that
// is alive and not draining, and is told why; with one it is.
func TestAdmitDefersWithoutALiveMemberRecord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		events []meta.Event
		reason string
	}{
		{"no_record", nil, "no member record yet"},
		{"dead", []meta.Event{memberJoin(2), &meta.MemberDead{ID: "n2"}}, "its member record is dead"},
		{"draining", []meta.Event{memberJoin(2), &meta.SetMemberDraining{ID: "n2", Draining: true}}, "it is draining"},
		{"alive", []meta.Event{memberJoin(2)}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := seeded(t)
			a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
			ctx := context.Background()
			if got, err := a.Admit(ctx, join(2)); err != nil || got.Status != membership.StatusStaged {
				t.Fatalf("first join: %+v, %v", got, err)
			}
			register(t, s, tc.events...)
			want := membership.Decision{Status: membership.StatusDeferred, Reason: tc.reason}
			if tc.reason == "" {
				want = membership.Decision{Status: membership.StatusPromoted}
			}
			if got, err := a.Admit(ctx, join(2)); err != nil || got != want {
				t.Fatalf("second join: %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

// Ensure that a staged node is promoted once a voter left room for it.
func TestAdmitPromotesWhenRoomOpens(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
	ctx := context.Background()
	for i := 2; i <= 4; i++ {
		register(t, s, memberJoin(i))
		for range 2 {
			if _, err := a.Admit(ctx, join(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, _ := a.Admit(ctx, join(4)); got.Status != membership.StatusDeferred {
		t.Fatalf("fourth node with three voters: %+v", got)
	}
	if err := s.RemoveReplica(ctx, meta.ReplicaID("n2")); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Admit(ctx, join(4)); err != nil || got.Status != membership.StatusPromoted {
		t.Fatalf("promotion: %+v, %v", got, err)
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

// registered returns a fake store holding member records reporting the given
// entry types (0: no report) and n1 as a voter.
func registered(t *testing.T, reports map[string]meta.EntryType) *fake.MetaStore {
	t.Helper()
	s := fake.NewMetaStore()
	for id, types := range reports {
		ev := &meta.MemberJoin{ID: id, Addr: "10.0.0.1:7942", ClusterAddr: "10.0.0.1:7943", EntryTypes: types}
		if _, err := s.Commit(meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddVoter(context.Background(), meta.ReplicaID("n1"), "10.0.0.1:7943"); err != nil {
		t.Fatal(err)
	}
	return s
}

// Ensure that a joiner not yet in the configuration is refused with
// ErrOlderRelease (the API's 409 older_release) when it applies fewer entry
// types than every recorded member but itself, or than the leader's
// database applied; and that a server already in the configuration is
// never refused for its release (internals §8.3 "Joining", §9.3).
func TestAdmitRefusesOlderRelease(t *testing.T) {
	t.Parallel()
	const newest = meta.AppliesThroughType
	cases := []struct {
		name    string
		members map[string]meta.EntryType
		remote  bool // the database applied a remote entry (type 35)
		joiner  meta.EntryType
		refused bool
	}{
		{"older_than_every_member", map[string]meta.EntryType{"n1": newest, "n2": newest}, false, meta.TypeDeleteUserReleaseTopics, true},
		{"legacy_joiner_among_new_members", map[string]meta.EntryType{"n1": meta.TypePruneAssignment}, false, 0, true},
		{"not_older_than_the_oldest_member", map[string]meta.EntryType{"n1": newest, "n2": 0}, false, meta.TypeDeleteUserReleaseTopics, false},
		{"same_release", map[string]meta.EntryType{"n1": newest, "n2": newest}, false, newest, false},
		{"newer_than_the_members", map[string]meta.EntryType{"n1": 0}, false, newest, false},
		{"legacy_everywhere", map[string]meta.EntryType{"n1": 0, "n2": 0}, false, 0, false},
		{"own_old_record_does_not_count", map[string]meta.EntryType{"n1": newest, "n4": 0}, false, meta.TypeDeleteUserReleaseTopics, true},
		{"own_record_alone", map[string]meta.EntryType{"n4": newest}, false, 0, false},
		{"older_than_the_database", map[string]meta.EntryType{"n1": 0}, true, meta.TypeDeleteUserReleaseTopics, true},
		{"applies_what_the_database_applied", map[string]meta.EntryType{"n1": 0}, true, meta.TypePutRemote, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := registered(t, tc.members)
			if tc.remote {
				commitRemote(t, s)
			}
			a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
			j := membership.Join{NodeID: "n4", RaftAddr: "10.0.0.4:7943", EntryTypes: tc.joiner}
			got, err := a.Admit(context.Background(), j)
			if tc.refused {
				m, _ := s.Membership(context.Background())
				if !errors.Is(err, membership.ErrOlderRelease) || got.Status != "" || len(m.Voters)+len(m.NonVoters) != 1 {
					t.Fatalf("Admit = %+v, %v (membership %+v); want ErrOlderRelease and no change", got, err, m)
				}
				return
			}
			if err != nil || got.Status != membership.StatusStaged {
				t.Fatalf("Admit = %+v, %v; want staged", got, err)
			}
		})
	}
}

// Ensure that voters and staged non-voters are answered as they stand
// whatever release they report: their heartbeats hold types back instead.
func TestAdmitNeverRefusesAServerInTheConfiguration(t *testing.T) {
	t.Parallel()
	s := registered(t, map[string]meta.EntryType{"n1": meta.AppliesThroughType, "n2": meta.AppliesThroughType})
	commitRemote(t, s)
	ctx := context.Background()
	for _, id := range []string{"n2", "n3"} {
		if err := s.AddVoter(ctx, meta.ReplicaID(id), id+":7943"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddNonVoter(ctx, meta.ReplicaID("n5"), "n5:7943"); err != nil {
		t.Fatal(err)
	}
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters)
	if got, err := a.Admit(ctx, membership.Join{NodeID: "n3", RaftAddr: "n3:7943"}); err != nil || got.Status != membership.StatusVoter {
		t.Fatalf("legacy voter: %+v, %v", got, err)
	}
	if got, err := a.Admit(ctx, membership.Join{NodeID: "n5", RaftAddr: "n5:7943"}); err != nil || got.Status != membership.StatusDeferred {
		t.Fatalf("legacy staged node: %+v, %v", got, err)
	}
}

func commitRemote(t *testing.T, s *fake.MetaStore) {
	t.Helper()
	ev := &meta.PutRemote{Name: "dr", ID: "00000000000000f1", URL: "https://dr.example.com", Username: "r", Salt: make([]byte, 32),
		Credential: meta.RemoteCredential{SealedPassword: []byte("s"), KeyVersion: "000000000000000a", Fingerprint: "0123456789ab"},
		Limits: meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5000, IdleConnTimeoutMs: 1000, ConnMaxAgeMs: 10000,
			CheckIntervalMs: 10000, Compression: "none"}}
	if _, err := s.Commit(meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil {
		t.Fatal(err)
	}
	if got := s.NewestTypeApplied(); got != meta.TypePutRemote {
		t.Fatalf("fake newest type %s after a remote", got)
	}
}

// Ensure that a staged node is promoted only once the leader has led for
// 12 s (internals §9.3), then at once.
func TestAdmitPromotesOnlyAfterTheLeaderLed12s(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	clock := fake.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s.SetLeaderSince(clock.Now())
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters, membership.WithClock(clock))
	ctx := context.Background()
	register(t, s, memberJoin(2))
	if got, err := a.Admit(ctx, join(2)); err != nil || got.Status != membership.StatusStaged {
		t.Fatalf("first join: %+v, %v", got, err)
	}
	clock.Advance(11 * time.Second)
	got, err := a.Admit(ctx, join(2))
	if err != nil || got.Status != membership.StatusDeferred || !strings.Contains(got.Reason, "led for less than 12s") {
		t.Fatalf("after 11 s of leadership: %+v, %v", got, err)
	}
	clock.Advance(time.Second)
	if got, err := a.Admit(ctx, join(2)); err != nil || got.Status != membership.StatusPromoted {
		t.Fatalf("after 12 s of leadership: %+v, %v", got, err)
	}
}

// Ensure that a staged node whose Raft connection from the leader failed in
// the last 12 s is not promoted, unless a connection succeeded since
// (internals §9.3: heartbeats to the joiner must not be failing).
func TestAdmitDefersWhileTheLinkToTheJoinerFails(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	clock := fake.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters, membership.WithClock(clock))
	ctx := context.Background()
	register(t, s, memberJoin(2))
	j := join(2)
	if got, err := a.Admit(ctx, j); err != nil || got.Status != membership.StatusStaged {
		t.Fatalf("first join: %+v, %v", got, err)
	}
	s.SetRaftLink(j.RaftAddr, clock.Now().Add(-11*time.Second), clock.Now().Add(-20*time.Second))
	if got, _ := a.Admit(ctx, j); got.Status != membership.StatusDeferred || !strings.Contains(got.Reason, "Raft connection") {
		t.Fatalf("a failure 11 s ago: %+v", got)
	}
	s.SetRaftLink(j.RaftAddr, clock.Now().Add(-11*time.Second), clock.Now().Add(-time.Second))
	if got, err := a.Admit(ctx, j); err != nil || got.Status != membership.StatusPromoted {
		t.Fatalf("a success after the failure: %+v, %v", got, err)
	}
}

// Ensure that a failure older than 12 s no longer blocks a promotion.
func TestAdmitForgetsAnOldLinkFailure(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	clock := fake.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters, membership.WithClock(clock))
	ctx := context.Background()
	register(t, s, memberJoin(2))
	j := join(2)
	if _, err := a.Admit(ctx, j); err != nil {
		t.Fatal(err)
	}
	s.SetRaftLink(j.RaftAddr, clock.Now().Add(-12*time.Second), time.Time{})
	if got, err := a.Admit(ctx, j); err != nil || got.Status != membership.StatusPromoted {
		t.Fatalf("a failure 12 s ago: %+v, %v", got, err)
	}
}

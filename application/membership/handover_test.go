package membership_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain/meta"
)

// rejoinSetup is a leader n1 of voters n1..n3, all with live member
// records, that has led for tenure, with a captured log.
type rejoinSetup struct {
	store *fake.MetaStore
	clock *fake.Clock
	admit *membership.Admitter
	log   *bytes.Buffer
}

func rejoinCluster(t *testing.T, tenure time.Duration) rejoinSetup {
	t.Helper()
	return rejoinClusterRecorded(t, tenure, 1, 2, 3)
}

// rejoinClusterRecorded is rejoinCluster with member records for the
// nodes listed only.
func rejoinClusterRecorded(t *testing.T, tenure time.Duration, recorded ...int) rejoinSetup {
	t.Helper()
	s := seeded(t)
	s.SetReplicaID(meta.ReplicaID("n1"))
	for _, n := range []int{2, 3} {
		if err := s.AddVoter(context.Background(), meta.ReplicaID(join(n).NodeID), join(n).RaftAddr); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range recorded {
		register(t, s, memberJoin(n))
	}
	clock := fake.NewClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s.SetLeaderSince(clock.Now().Add(-tenure))
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	a := membership.NewAdmitter(s, membership.DefaultMaxVoters, membership.WithClock(clock), membership.WithLogger(log))
	return rejoinSetup{store: s, clock: clock, admit: a, log: &buf}
}

func emptyJoin(n int) membership.Join {
	j := join(n)
	j.DataDirEmpty = true
	return j
}

// Ensure that a voter that ran before (member record) and rejoins from an
// empty data directory makes a leader of 12 s hand the leadership to a
// healthy other voter before answering "voter", and says so at warn: the
// old leader's heartbeat would carry a commit index the empty log cannot
// reach (internals §9.2, §9.3).
func TestAdmitHandsLeadershipOverForAWipedVoter(t *testing.T) {
	t.Parallel()
	c := rejoinCluster(t, 12*time.Second)
	got, err := c.admit.Admit(context.Background(), emptyJoin(2))
	if err != nil || got.Status != membership.StatusVoter {
		t.Fatalf("rejoin: %+v, %v; want voter", got, err)
	}
	if tr := c.store.Transfers(); !slices.Equal(tr, []uint64{meta.ReplicaID("n3")}) {
		t.Fatalf("transfers %v; want one to n3", tr)
	}
	out := c.log.String()
	for _, want := range []string{"level=WARN", "handing leadership over so it can catch up from scratch", "node=n2", "target=n3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
}

// Ensure that the hand-over picks a voter whose Raft link is not failing
// and whose member record is alive, and that with none left the join is
// still answered "voter" with no transfer, logged at warn (internals §9.3).
func TestAdmitHandsOverOnlyToAHealthyVoter(t *testing.T) {
	t.Parallel()
	c := rejoinCluster(t, time.Minute)
	// n2 is the one rejoining; n3's link fails, n4 is a voter whose record is dead.
	if err := c.store.AddVoter(context.Background(), meta.ReplicaID("n4"), join(4).RaftAddr); err != nil {
		t.Fatal(err)
	}
	register(t, c.store, memberJoin(4), memberJoin(5))
	if err := c.store.AddVoter(context.Background(), meta.ReplicaID("n5"), join(5).RaftAddr); err != nil {
		t.Fatal(err)
	}
	c.store.SetRaftLink(join(3).RaftAddr, c.clock.Now().Add(-time.Second), time.Time{})
	register(t, c.store, &meta.MemberDead{ID: "n4"})
	if got, err := c.admit.Admit(context.Background(), emptyJoin(2)); err != nil || got.Status != membership.StatusVoter {
		t.Fatalf("rejoin: %+v, %v", got, err)
	}
	if tr := c.store.Transfers(); !slices.Equal(tr, []uint64{meta.ReplicaID("n5")}) {
		t.Fatalf("transfers %v; want one to n5, the only healthy other voter", tr)
	}

	c = rejoinCluster(t, time.Minute)
	c.store.SetRaftLink(join(3).RaftAddr, c.clock.Now().Add(-time.Second), time.Time{})
	if got, err := c.admit.Admit(context.Background(), emptyJoin(2)); err != nil || got.Status != membership.StatusVoter {
		t.Fatalf("rejoin without a healthy voter: %+v, %v", got, err)
	}
	if tr := c.store.Transfers(); len(tr) != 0 {
		t.Fatalf("transfers %v with no healthy other voter", tr)
	}
	if out := c.log.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "no other healthy voter") {
		t.Fatalf("no warning:\n%s", out)
	}
}

// Ensure that no hand-over happens for a late initial member of a
// brand-new install (a voter with no member record: never replicated to),
// for a leader that led less than 12 s (its match indexes started at 0,
// and no bouncing), or for a voter whose data directory is not empty.
func TestAdmitKeepsLeadershipWhenNoHandOverIsNeeded(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		tenure time.Duration
		join   membership.Join
		drop   bool // n2 has no member record
	}{
		"late_initial_member": {tenure: time.Minute, join: emptyJoin(2), drop: true},
		"fresh_leader":        {tenure: 12*time.Second - time.Millisecond, join: emptyJoin(2)},
		"data_dir_kept":       {tenure: time.Minute, join: join(2)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := rejoinCluster(t, tc.tenure)
			if tc.drop {
				c = rejoinClusterRecorded(t, tc.tenure, 1, 3)
			}
			got, err := c.admit.Admit(context.Background(), tc.join)
			if err != nil || got.Status != membership.StatusVoter {
				t.Fatalf("join: %+v, %v", got, err)
			}
			if tr := c.store.Transfers(); len(tr) != 0 {
				t.Fatalf("transfers %v; want none", tr)
			}
			if !c.store.IsLeader() {
				t.Fatal("the leader gave up the leadership")
			}
		})
	}
}

// Ensure that a hand-over that fails still answers "voter" and is logged.
func TestAdmitAnswersVoterWhenTheHandOverFails(t *testing.T) {
	t.Parallel()
	c := rejoinCluster(t, time.Minute)
	c.store.FailTransfer(errors.New("no leader of a later term"))
	if got, err := c.admit.Admit(context.Background(), emptyJoin(2)); err != nil || got.Status != membership.StatusVoter {
		t.Fatalf("rejoin: %+v, %v", got, err)
	}
	if out := c.log.String(); !strings.Contains(out, "did not complete") {
		t.Fatalf("no warning:\n%s", out)
	}
}

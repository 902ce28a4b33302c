package membership_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// voters builds a store whose Raft voters are n1..n<count>, each with a
// live member record, and topic t with one partition on each of owners.
func voters(t *testing.T, count int, owners ...string) *fake.MetaStore {
	t.Helper()
	s := fake.NewMetaStore()
	for i := 1; i <= count; i++ {
		if err := s.AddVoter(context.Background(), meta.ReplicaID(fmt.Sprintf("n%d", i)), fmt.Sprintf("10.0.0.%d:7943", i)); err != nil {
			t.Fatal(err)
		}
		register(t, s, memberJoin(i))
	}
	if len(owners) > 0 {
		register(t, s, &meta.CreateTopic{Name: "t", ID: "00000000000000a1", Partitions: int32(len(owners)), VisibilityTimeoutMs: 30_000})
		for p, o := range owners {
			register(t, s, &meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: int32(p), Owner: o})
		}
	}
	return s
}

var admin = membership.Caller{Name: "admin", Remote: "10.0.0.9"}

func codes(v membership.Verdict) []string {
	out := []string{}
	for _, r := range v.Reasons {
		out = append(out, r.Code)
	}
	return out
}

// Ensure that the decommission verdict (api.md §2.17, conformance 233 and
// 234) refuses going below three voters that are not draining, a node that
// is dead and owns partitions, a node whose partitions nobody can take, and
// a removal that would leave fewer than a majority of the voters alive; and
// that it reports voter, owned partitions and inbound moves.
func TestDecommissionVerdict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := fixedClock(time.UnixMilli(1_700_000_000_000))
	cases := []struct {
		name  string
		store func(t *testing.T) *fake.MetaStore
		id    string
		want  []string
		owned int
	}{
		{"three voters", func(t *testing.T) *fake.MetaStore { return voters(t, 3) }, "n2", []string{membership.ReasonBelowMinVoters}, 0},
		{"four voters", func(t *testing.T) *fake.MetaStore { return voters(t, 4, "n1", "n4") }, "n4", []string{}, 1},
		{"four voters, one draining already", func(t *testing.T) *fake.MetaStore {
			s := voters(t, 4)
			register(t, s, &meta.SetMemberDraining{ID: "n3", Draining: true})
			return s
		}, "n4", []string{membership.ReasonBelowMinVoters}, 0},
		{"four voters, two dead", func(t *testing.T) *fake.MetaStore {
			s := voters(t, 4)
			register(t, s, &meta.MemberDead{ID: "n2"}, &meta.MemberDead{ID: "n3"})
			return s
		}, "n4", []string{membership.ReasonNoHealthyMajority}, 0},
		{"dead owner", func(t *testing.T) *fake.MetaStore {
			s := voters(t, 5, "n5")
			register(t, s, &meta.MemberDead{ID: "n5"})
			return s
		}, "n5", []string{membership.ReasonOwnerDead}, 1},
		{"no receivers", func(t *testing.T) *fake.MetaStore {
			s := voters(t, 5, "n5", "n5")
			for _, id := range []string{"n1", "n2", "n3", "n4"} {
				register(t, s, &meta.MemberDead{ID: id})
			}
			return s
		}, "n5", []string{membership.ReasonNoHealthyMajority, membership.ReasonNoReceivers}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.store(t)
			v, err := membership.NewDecommissioner(s, clock).Verdict(ctx, c.id)
			if err != nil {
				t.Fatal(err)
			}
			if got := codes(v); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("reasons %v, want %v (%+v)", got, c.want, v)
			}
			if v.WouldDecommission != (len(c.want) == 0) || !v.Voter || v.OwnedPartitions != c.owned || v.Member != c.id {
				t.Fatalf("verdict %+v", v)
			}
		})
	}
}

// Ensure that Start marks a node draining only when the verdict allows it
// (conformance 145, 233), Cancel clears the mark, and both answer an
// unknown id with domain.ErrMemberNotFound (conformance 146).
func TestDecommissionStartAndCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := fixedClock(time.UnixMilli(1_700_000_000_000))
	draining := func(s *fake.MetaStore, id string) bool {
		ms, _ := s.Members()
		for _, m := range ms {
			if m.ID == id {
				return m.Draining
			}
		}
		t.Fatalf("no member %s", id)
		return false
	}

	small := voters(t, 3)
	d := membership.NewDecommissioner(small, clock)
	err := d.Start(ctx, admin, "n3")
	var refused *membership.RefusedError
	if !errors.As(err, &refused) || !errors.Is(err, domain.ErrConflict) || refused.Verdict.Reasons[0].Code != membership.ReasonBelowMinVoters {
		t.Fatalf("three voters: %v", err)
	}
	if draining(small, "n3") {
		t.Fatal("a refused decommission marked the node draining")
	}

	s := voters(t, 4)
	d = membership.NewDecommissioner(s, clock)
	for range 2 { // a repeat is answered the same
		if err := d.Start(ctx, admin, "n4"); err != nil || !draining(s, "n4") {
			t.Fatalf("start: %v, draining %v", err, draining(s, "n4"))
		}
	}
	if err := d.Cancel(ctx, admin, "n4"); err != nil || draining(s, "n4") {
		t.Fatalf("cancel: %v, draining %v", err, draining(s, "n4"))
	}
	for name, err := range map[string]error{
		"start":   d.Start(ctx, admin, "n9"),
		"cancel":  d.Cancel(ctx, admin, "n9"),
		"verdict": func() error { _, err := d.Verdict(ctx, "n9"); return err }(),
	} {
		if !errors.Is(err, domain.ErrMemberNotFound) {
			t.Fatalf("%s of an unknown id: %v", name, err)
		}
	}
	if err := membership.NewDecommissioner(noConfig{s}, clock).Start(ctx, admin, "n4"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("no configuration: %v", err)
	}
}

// Ensure that SelfDrain follows this node's drain flag and re-reads the
// member table only when the placement view moved.
func TestSelfDrainFollowsTheFlag(t *testing.T) {
	t.Parallel()
	s := voters(t, 4)
	sd := membership.NewSelfDrain(s, "n4")
	if sd.Draining() {
		t.Fatal("draining before any mark")
	}
	register(t, s, &meta.SetMemberDraining{ID: "n4", Draining: true})
	if !sd.Draining() {
		t.Fatal("not draining after the mark")
	}
	register(t, s, &meta.SetMemberDraining{ID: "n3", Draining: true}, &meta.SetMemberDraining{ID: "n4", Draining: false})
	if sd.Draining() {
		t.Fatal("still draining after the cancel")
	}
}

// Ensure that each decommission and cancel leaves one audit line
// (internals.md §12.4): ok, or refused with the client's message.
func TestDecommissionIsAudited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	audit := &fake.Audit{}
	d := membership.NewDecommissioner(voters(t, 3), fixedClock(time.UnixMilli(1_700_000_000_000))).WithAudit(audit)
	_ = d.Start(ctx, admin, "n3")
	_ = d.Cancel(ctx, admin, "n3")
	got := audit.Events()
	if len(got) != 2 || got[0].Event != "cluster.decommission" || got[0].Outcome != "refused" || got[0].Actor != "admin" ||
		got[0].Remote != "10.0.0.9" || got[0].Subject != `member "n3"` || got[0].Reason == "" ||
		got[1].Event != "cluster.decommission.cancel" || got[1].Outcome != "ok" {
		t.Fatalf("audit lines %+v", got)
	}
}

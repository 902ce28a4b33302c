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
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

type flag bool

func (f flag) Draining() bool { return bool(f) }

// Ensure that a node's status reports its drain flag, produces in flight,
// dispatch backlog and its quarantined copies (count, bytes, the first
// 100 names), and no topic directory among them.
func TestStatusReporterReportsTheNode(t *testing.T) {
	t.Parallel()
	dirs := []ports.TopicDir{{Dir: "live", Topic: "live"}}
	for i := range 102 {
		dirs = append(dirs, ports.TopicDir{Dir: fmt.Sprintf("q%03d", i), Quarantine: true, Bytes: 10})
	}
	r := membership.NewStatusReporter(membership.StatusDeps{Self: "n2", Drain: flag(true), Dirs: fake.NewTopicDirs(dirs...),
		Backlog: func() uint64 { return 5 }, InFlight: func() int64 { return 2 }})
	st, err := r.NodeStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	q := st.Quarantine
	if st.Node != "n2" || !st.Draining || st.DispatchBacklog != 5 || st.ProduceInFlight != 2 ||
		q.Copies != 102 || q.Bytes != 1020 || len(q.List) != 100 || q.List[0] != "q000" || q.List[99] != "q099" {
		t.Fatalf("status %+v", st)
	}
}

// statusTable answers NodeStatus per node; a node not in it errs.
type statusTable map[string]ports.NodeStatus

func (s statusTable) NodeStatus(_ context.Context, node string) (ports.NodeStatus, error) {
	if st, ok := s[node]; ok {
		return st, nil
	}
	return ports.NodeStatus{}, errors.New("no answer from " + node)
}

type localStatus ports.NodeStatus

func (l localStatus) NodeStatus(context.Context) (ports.NodeStatus, error) {
	return ports.NodeStatus(l), nil
}

// Ensure that the detail listing (api.md §2.17, conformance 232) carries
// every member's own status, this node's read locally, or why it could
// not be read.
func TestRosterDetailAsksEveryMember(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	register(t, s, memberJoin(1), memberJoin(2), memberJoin(3))
	r := membership.NewRoster(deskStore{MetaStore: s, admitted: true, leader: "n1"}, fixedClock(time.UnixMilli(1_700_000_000_000))).
		WithStatus(membership.StatusSources{Self: "n1", Local: localStatus{Node: "n1"},
			Peers: statusTable{"n2": {Node: "n2", DispatchBacklog: 4}}})
	views, err := r.ListDetail(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range views {
		if v.NodeStatus != nil {
			got[v.ID] = fmt.Sprintf("%s/%d", v.NodeStatus.Node, v.NodeStatus.DispatchBacklog)
		} else {
			got[v.ID] = v.StatusError
		}
	}
	want := map[string]string{"n1": "n1/0", "n2": "n2/4", "n3": "no answer from n3"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("detail %v, want %v", got, want)
	}
	plain, err := r.List(context.Background())
	if err != nil || plain[0].NodeStatus != nil || plain[0].StatusError != "" {
		t.Fatalf("a plain listing asked for statuses: %+v %v", plain, err)
	}
}

// Ensure that a draining member lists what keeps it in the cluster (api.md
// §2.17 decommission_blocked): three voters, the leadership it holds, a
// move aimed at it, and with detail its dispatch backlog; and that a member
// not draining lists nothing.
func TestRosterShowsDrainBlockers(t *testing.T) {
	t.Parallel()
	s := voters(t, 3, "n3", "n1")
	register(t, s, &meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Target: "n3"},
		&meta.SetMemberDraining{ID: "n3", Draining: true})
	r := membership.NewRoster(deskStore{MetaStore: s, admitted: true, leader: "n3"}, fixedClock(time.UnixMilli(1_700_000_000_000))).
		WithStatus(membership.StatusSources{Self: "n1", Local: localStatus{Node: "n1"},
			Peers: statusTable{"n2": {Node: "n2"}, "n3": {Node: "n3", Draining: true, DispatchBacklog: 5}}})
	codesOf := func(v membership.MemberView) []string {
		out := []string{}
		for _, b := range v.DecommissionBlocked {
			out = append(out, b.Code)
		}
		return out
	}
	plain, err := r.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{membership.ReasonBelowMinVoters, membership.BlockedLeaderTransfer, membership.BlockedMoveTarget}
	if got := codesOf(plain[2]); !reflect.DeepEqual(got, want) || len(plain[0].DecommissionBlocked) != 0 {
		t.Fatalf("blockers %v (n1: %v), want %v", got, plain[0].DecommissionBlocked, want)
	}
	detail, err := r.ListDetail(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := codesOf(detail[2]); !reflect.DeepEqual(got, append(want, membership.BlockedDispatchBacklog)) {
		t.Fatalf("detail blockers %v", got)
	}
}

package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/adapters/httpapi"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain/meta"
)

type drainClock struct{}

func (drainClock) Now() time.Time { return time.UnixMilli(1_700_000_100_000) }

// drainLeader is a fake replica that knows n1 leads.
type drainLeader struct{ *fake.MetaStore }

func (drainLeader) Leader() (uint64, bool) { return meta.ReplicaID("n1"), true }

// drainNode serves the real cluster routes over a fake replica of four
// voters n1..n4 and topic t of 2 partitions on n1, partition 1 moving to
// n2; security off.
func drainNode(t *testing.T) (string, *fake.MetaStore) {
	t.Helper()
	s := fake.NewMetaStore()
	t.Cleanup(s.Close)
	evs := []meta.Event{}
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("n%d", i)
		if err := s.AddVoter(context.Background(), meta.ReplicaID(id), id+":7943"); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, &meta.MemberJoin{ID: id, Addr: id + ":7942", ClusterAddr: id + ":7943"})
	}
	evs = append(evs, &meta.CreateTopic{Name: "t", ID: "00000000000000a1", Partitions: 2, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 0, Owner: "n1"},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Owner: "n1"},
		&meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Target: "n2"})
	for _, ev := range evs {
		if _, err := s.Commit(meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	v := drainLeader{s}
	routes := append(httpapi.ClusterRoutes(membership.NewRoster(v, drainClock{}), s, zap.NewNop()),
		httpapi.ClusterAdminRoutes(membership.NewDecommissioner(v, drainClock{}), membership.NewForgetter(v, drainClock{}),
			moves.NewAborter(s, drainClock{}), s, zap.NewNop())...)
	srv := httptest.NewServer(httpapi.NewEngine(zap.NewNop(), routes...))
	t.Cleanup(srv.Close)
	return srv.URL, s
}

// Ensure that `narad cluster decommission` (api.md §8.2) prints the dry
// run's verdict, marks the node draining and cancels the mark; that
// `cluster moves` lists the move and `moves abort` clears it; that forget
// reports the server's refusal; and that bad arguments are usage errors.
func TestClusterDecommissionMovesAndForget(t *testing.T) {
	t.Parallel()
	url, _ := drainNode(t)
	run := func(args ...string) cliResult {
		return runCLI(t, cliOpts{}, append([]string{"-s", url, "cluster"}, args...)...)
	}
	steps := []struct {
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{[]string{"decommission", "n4", "--dry-run"}, 0, "would decommission n4: yes\nvoter: true\nowned partitions: 0\ninbound moves: 0\n", ""},
		{[]string{"decommission", "n4", "--dry-run", "--json"}, 0, `"would_decommission": true`, ""},
		{[]string{"decommission", "n4"}, 0, "n4 is draining", ""},
		{[]string{"members"}, 0, "alive (draining)", ""},
		{[]string{"members", "--detail"}, 0, "unknown: node status is not available on this node", ""},
		{[]string{"decommission", "n4", "--cancel"}, 0, "n4 is no longer draining\n", ""},
		{[]string{"decommission", "n1"}, 0, "n1 is draining", ""},
		{[]string{"members"}, 0, "n1 stays: leader_transfer: n1 leads the metadata shard", ""},
		{[]string{"decommission", "n1", "--cancel"}, 0, "n1 is no longer draining", ""},
		{[]string{"decommission", "n3", "--dry-run"}, 0, "yes", ""},
		{[]string{"decommission", "n9"}, 1, "", "http 404: not found"},
		{[]string{"decommission", "n4", "--cancel", "--dry-run"}, 2, "", "--cancel and --dry-run cannot be used together"},
		{[]string{"moves"}, 0, "t      1          n1 (alive)  n2 (alive)  -", ""},
		{[]string{"moves", "abort", "t", "x"}, 2, "", "partition must be a non-negative integer"},
		{[]string{"moves", "abort", "t", "1", "--target", "n3"}, 1, "", "http 409"},
		{[]string{"moves", "abort", "t", "1", "--target", "n2"}, 0, "aborted the move of t/1 from n1 to n2: n1 keeps the partition", ""},
		{[]string{"moves"}, 0, "no partition is moving\n", ""},
		{[]string{"members", "forget", "n2"}, 1, "", "http 409: n2 has a member record: decommission it instead"},
		{[]string{"members", "forget", "n1"}, 1, "", "http 400"},
	}
	for _, st := range steps {
		r := run(st.args...)
		if r.code != st.code || !strings.Contains(r.stdout, st.stdout) || !strings.Contains(r.stderr, st.stderr) {
			t.Fatalf("narad cluster %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(st.args, " "), r.code, r.stdout, r.stderr)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
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
		{[]string{"decommission", "n3", "--dry-run"}, 0, "would decommission n3: no\nvoter: true\nowned partitions: 0\ninbound moves: 0\n  below_min_voters: 2 voters would remain that are not draining; at least 3 must\n", ""},
		{[]string{"decommission", "n3"}, 1, "", "narad: http 409: n3 cannot be decommissioned: 2 voters would remain that are not draining; at least 3 must\n  below_min_voters: 2 voters would remain that are not draining; at least 3 must\n"},
		{[]string{"decommission", "n4", "--cancel"}, 0, "n4 is no longer draining\n", ""},
		{[]string{"decommission", "n1"}, 0, "n1 is draining", ""},
		{[]string{"members"}, 0, "n1 stays: leader_transfer: n1 leads the metadata shard", ""},
		{[]string{"decommission", "n1", "--cancel"}, 0, "n1 is no longer draining", ""},
		{[]string{"decommission", "n3", "--dry-run"}, 0, "yes", ""},
		{[]string{"decommission", "n9"}, 1, "", "http 404: not found"},
		{[]string{"decommission", "n4", "--cancel", "--dry-run"}, 2, "", "--cancel and --dry-run cannot be used together"},
		{[]string{"moves"}, 0, "t      1          n1 (alive)  n2 (alive)  -", ""},
		{[]string{"moves", "--detail"}, 0, "unknown: node status is not available on this node", ""},
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

// scriptedNode answers each "METHOD escaped-path" from answers (JSON
// bodies; 404 otherwise) and records every request line with its query.
type scriptedNode struct {
	mu      sync.Mutex
	lines   []string
	answers map[string]scripted
}

type scripted struct {
	status int
	body   string
}

func newScriptedNode(t *testing.T, answers map[string]scripted) (*scriptedNode, string) {
	t.Helper()
	n := &scriptedNode{answers: answers}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.lines = append(n.lines, r.Method+" "+r.URL.RequestURI())
		a, ok := n.answers[r.Method+" "+r.URL.EscapedPath()]
		n.mu.Unlock()
		if !ok {
			a = scripted{http.StatusNotFound, `{"error":"not found"}`}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return n, srv.URL
}

func (n *scriptedNode) requests() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.lines)
}

// Ensure that each cluster admin command sends its request and prints the
// answer: a refusal's every reason on stderr, the dry run's verdict, the
// moves' worker reports, forget's and abort's answers; and that misuse is
// a usage error (exit 2) that sends nothing.
func TestClusterAdminCommandsPrintTheAnswers(t *testing.T) {
	t.Parallel()
	refusal := `{"error":"n3 cannot be decommissioned: a; b","reasons":[{"code":"below_min_voters","message":"a"},{"code":"no_receivers","message":"b"}]}`
	verdict := `{"member":"n3","would_decommission":false,"reasons":[{"code":"owner_dead","message":"n3 is dead"}],"voter":false,"owned_partitions":4,"inbound_moves":1}`
	moves := `{"moves":[{"topic":"t","partition":1,"from":"n1","to":"n2","from_status":"alive","to_status":"alive","worker":{"topic":"t","partition":1,"source":"n1","target":"n2","phase":"copying","attempts":3,"last_error":"connection reset","copied_bytes":1536,"blocked":"copy_unverifiable"}},` +
		`{"topic":"u","partition":0,"from":"n1","to":"n3","from_status":"alive","to_status":"dead","blocked":"target_dead","worker_error":"timeout"}]}`
	node, url := newScriptedNode(t, map[string]scripted{
		"POST /v1/cluster/members/n3/decommission":    {http.StatusConflict, refusal},
		"POST /v1/cluster/members/n%2F4/decommission": {http.StatusOK, verdict},
		"GET /v1/cluster/moves":                       {http.StatusOK, moves},
		"POST /v1/cluster/members/n5/forget":          {http.StatusOK, `{"id":"n5","voter":true}`},
		"POST /v1/cluster/moves/a%2Fb/2/abort":        {http.StatusAccepted, `{"move":{"topic":"a/b","partition":2,"from":"n1","to":"n2","from_status":"alive","to_status":"draining"},"note":"n1 keeps the partition"}`},
	})
	steps := []struct {
		args     []string
		code     int
		stdout   string // exact
		stderr   string // substring
		requests []string
	}{
		{[]string{"decommission", "n3"}, 1, "", "narad: http 409: n3 cannot be decommissioned: a; b\n  below_min_voters: a\n  no_receivers: b\n",
			[]string{"POST /v1/cluster/members/n3/decommission"}},
		{[]string{"decommission", "n/4", "--dry-run"}, 0, "would decommission n3: no\nvoter: false\nowned partitions: 4\ninbound moves: 1\nowner_dead: n3 is dead\n", "",
			[]string{"POST /v1/cluster/members/n%2F4/decommission?dry_run=true"}},
		{[]string{"moves", "--detail"}, 0, "TOPIC PARTITION FROM TO BLOCKED PHASE COPIED\n" +
			"t 1 n1 (alive) n2 (alive) - copying (copy_unverifiable) 1.5 KiB\n" +
			"u 0 n1 (alive) n3 (dead) target_dead unknown: timeout -\n" +
			"t/1: attempt 3: connection reset\n", "", []string{"GET /v1/cluster/moves?detail=true"}},
		{[]string{"moves"}, 0, "TOPIC PARTITION FROM TO BLOCKED\nt 1 n1 (alive) n2 (alive) -\nu 0 n1 (alive) n3 (dead) target_dead\n", "",
			[]string{"GET /v1/cluster/moves"}},
		{[]string{"members", "forget", "n5"}, 0, "forgot n5 (voter: true)\n", "", []string{"POST /v1/cluster/members/n5/forget"}},
		{[]string{"moves", "abort", "a/b", "2", "--target", "n2"}, 0, "aborted the move of a/b/2 from n1 to n2: n1 keeps the partition\n", "",
			[]string{"POST /v1/cluster/moves/a%2Fb/2/abort?target=n2"}},
		{[]string{"moves", "abort", "a/b", "2"}, 0, "aborted the move of a/b/2 from n1 to n2: n1 keeps the partition\n", "",
			[]string{"POST /v1/cluster/moves/a%2Fb/2/abort"}},
		{[]string{"decommission", "n3", "--cancel"}, 1, "", "narad: http 404: not found\n", []string{"DELETE /v1/cluster/members/n3/decommission"}},
		{[]string{"moves", "abort", "--", "t", "-1"}, 2, "", "partition must be a non-negative integer", nil},
		{[]string{"moves", "abort", "t", "1.5"}, 2, "", "partition must be a non-negative integer", nil},
		{[]string{"moves", "abort", "t"}, 2, "", "needs 2 argument(s): topic partition", nil},
		{[]string{"decommission"}, 2, "", "needs 1 argument(s): node-id", nil},
		{[]string{"decommission", "n3", "--cancel", "--dry-run"}, 2, "", "--cancel and --dry-run cannot be used together", nil},
		{[]string{"members", "forget"}, 2, "", "needs 1 argument(s): node-id", nil},
		{[]string{"moves", "extra"}, 2, "", "", nil},
	}
	seen := 0
	for _, st := range steps {
		r := runCLI(t, cliOpts{}, append([]string{"-s", url, "cluster"}, st.args...)...)
		stdout := strings.Join(squeezed(r.stdout), "\n") + "\n"
		if r.stdout == "" {
			stdout = ""
		}
		if r.code != st.code || stdout != st.stdout || !strings.Contains(r.stderr, st.stderr) {
			t.Fatalf("narad cluster %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(st.args, " "), r.code, r.stdout, r.stderr)
		}
		reqs := node.requests()
		if got := reqs[seen:]; !slices.Equal(got, st.requests) {
			t.Fatalf("narad cluster %s: requests %q, want %q", strings.Join(st.args, " "), got, st.requests)
		}
		seen = len(reqs)
	}
}

// Ensure that the --json forms print the answers as JSON: the dry run's
// verdict, forget's answer, and the moves ([] when none).
func TestClusterAdminCommandsPrintJSON(t *testing.T) {
	t.Parallel()
	_, url := newScriptedNode(t, map[string]scripted{
		"POST /v1/cluster/members/n3/decommission": {http.StatusOK, `{"member":"n3","would_decommission":true,"reasons":[],"voter":true,"owned_partitions":2,"inbound_moves":0}`},
		"POST /v1/cluster/members/n5/forget":       {http.StatusOK, `{"id":"n5","voter":false}`},
		"GET /v1/cluster/moves":                    {http.StatusOK, `{"moves":[]}`},
	})
	cases := []struct {
		args []string
		want any
	}{
		{[]string{"decommission", "n3", "--dry-run", "--json"}, map[string]any{"member": "n3", "would_decommission": true, "reasons": []any{}, "voter": true, "owned_partitions": 2.0, "inbound_moves": 0.0}},
		{[]string{"members", "forget", "n5", "--json"}, map[string]any{"id": "n5", "voter": false}},
		{[]string{"moves", "--json"}, []any{}},
		{[]string{"moves", "--detail", "--json"}, []any{}},
	}
	for _, tc := range cases {
		r := runCLI(t, cliOpts{}, append([]string{"-s", url, "cluster"}, tc.args...)...)
		var got any
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("narad cluster %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, cliOpts{}, "-s", url, "cluster", "moves"); r.code != 0 || r.stdout != "no partition is moving\n" {
		t.Fatalf("empty moves: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

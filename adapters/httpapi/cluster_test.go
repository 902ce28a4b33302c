package httpapi

import (
	"context"
	"fmt"
	"github.com/narad/narad/adapters/fake"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

type stubMembers struct {
	views []membership.MemberView
	err   error
}

func (s stubMembers) List(context.Context) ([]membership.MemberView, error) { return s.views, s.err }

func (s stubMembers) ListDetail(context.Context) ([]membership.MemberView, error) {
	out := make([]membership.MemberView, len(s.views))
	for i, v := range s.views {
		v.StatusError = "node status is not available on this node"
		out[i] = v
	}
	return out, s.err
}

// ensure that GET /v1/cluster/members answers the api.md §2.17 shape,
// refuses a detail value other than true/false, and answers 503 when the
// Raft configuration cannot be read.
func TestClusterMembersRoute(t *testing.T) {
	views := []membership.MemberView{{ID: "n1", Addr: "10.0.0.1:7942", Status: "alive", OwnedPartitions: 6, Voter: true, Leader: true, HeartbeatAgeSeconds: 2}}
	e := NewEngine(zap.NewNop(), ClusterRoutes(stubMembers{views: views}, fake.NewMetaStore(), zap.NewNop())...)
	rec := serve(e, "GET", "/v1/cluster/members", nil)
	want := `{"members":[{"id":"n1","addr":"10.0.0.1:7942","status":"alive","draining":false,"owned_partitions":6,"outbound_moves":0,"voter":true,"leader":true,"heartbeat_age_seconds":2}]}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if rec := serve(e, "GET", "/v1/cluster/members?detail=true", nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"status_error"`) {
		t.Fatalf("detail=true: %d %s", rec.Code, rec.Body.String())
	}
	for _, q := range []string{"detail=yes", "detail=true&detail=false", "detail=%zz"} {
		if rec := serve(e, "GET", "/v1/cluster/members?"+q, nil); rec.Code != 400 {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body.String())
		}
	}
	down := NewEngine(zap.NewNop(), ClusterRoutes(stubMembers{err: fmt.Errorf("x: %w", domain.ErrUnavailable)}, fake.NewMetaStore(), zap.NewNop())...)
	if rec := serve(down, "GET", "/v1/cluster/members", nil); rec.Code != 503 {
		t.Fatalf("no leader: %d %s", rec.Code, rec.Body.String())
	}
}

// detailMembers answers the detail listing with one member's own status.
type detailMembers struct{ stubMembers }

func (d detailMembers) ListDetail(context.Context) ([]membership.MemberView, error) {
	v := d.views[0]
	v.NodeStatus = &ports.NodeStatus{Node: "n1", Draining: true, ProduceInFlight: 1, DispatchBacklog: 2,
		Quarantine: ports.QuarantineInventory{Copies: 1, Bytes: 3, List: []string{"t.stale-00000000000000a1"}}}
	return []membership.MemberView{v}, nil
}

// Ensure that detail=true shows a member's own status in the api.md §2.17
// node_status shape.
func TestClusterMembersDetailShowsNodeStatus(t *testing.T) {
	views := []membership.MemberView{{ID: "n1", Addr: "10.0.0.1:7942", Status: "alive", Voter: true, Leader: true}}
	e := NewEngine(zap.NewNop(), ClusterRoutes(detailMembers{stubMembers{views: views}}, fake.NewMetaStore(), zap.NewNop())...)
	rec := serve(e, "GET", "/v1/cluster/members?detail=true", nil)
	want := `"node_status":{"node":"n1","draining":true,"produce_in_flight":1,"dispatch_backlog":2,"quarantine":{"copies":1,"bytes":3,"list":["t.stale-00000000000000a1"]},"moves":[]}`
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) || strings.Contains(rec.Body.String(), "status_error") {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
}

func (s stubMembers) Statuses(_ context.Context, ids []string) (map[string]ports.NodeStatus, map[string]string) {
	failed := map[string]string{}
	for _, id := range ids {
		failed[id] = "node status is not available on this node"
	}
	return map[string]ports.NodeStatus{}, failed
}

// workerMembers answers statuses with one move worker on n2.
type workerMembers struct{ stubMembers }

func (workerMembers) Statuses(_ context.Context, ids []string) (map[string]ports.NodeStatus, map[string]string) {
	got, failed := map[string]ports.NodeStatus{}, map[string]string{}
	for _, id := range ids {
		if id == "n2" {
			got[id] = ports.NodeStatus{Node: "n2", Moves: []ports.MoveReport{{Topic: "t", Partition: 1, Source: "n1", Target: "n2",
				StartedAt: time.Unix(1_700_000_000, 0), Phase: "frozen", Attempts: 1, CopiedBytes: 42}}}
			continue
		}
		failed[id] = "unreachable"
	}
	return got, failed
}

// Ensure that GET /v1/cluster/moves?detail=true puts each destination's
// report of its worker on the move (api.md §2.17), or why it is missing.
func TestClusterMovesDetailShowsWorkers(t *testing.T) {
	s := fake.NewMetaStore()
	for _, ev := range []meta.Event{
		&meta.MemberJoin{ID: "n1", Addr: "n1:7942", ClusterAddr: "n1:7943"},
		&meta.MemberJoin{ID: "n2", Addr: "n2:7942", ClusterAddr: "n2:7943"},
		&meta.CreateTopic{Name: "t", ID: "00000000000000a1", Partitions: 3, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Owner: "n1"},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: "00000000000000a1", Partition: 2, Owner: "n2"},
		&meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 1, Target: "n2"},
		&meta.SetAssignmentTarget{Topic: "t", TopicID: "00000000000000a1", Partition: 2, Target: "n3"},
	} {
		if _, err := s.Commit(meta.Envelope{AtMs: 1, Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	e := NewEngine(zap.NewNop(), ClusterRoutes(workerMembers{}, s, zap.NewNop())...)
	rec := serve(e, "GET", "/v1/cluster/moves?detail=true", nil)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, `"worker":{"topic":"t","partition":1,"source":"n1","target":"n2","started_at":"2023-11-14T22:13:20Z","phase":"frozen","attempts":1,"copied_bytes":42}`) ||
		!strings.Contains(body, `"worker_error":"unreachable"`) {
		t.Fatalf("%d %s", rec.Code, body)
	}
	if rec := serve(e, "GET", "/v1/cluster/moves", nil); strings.Contains(rec.Body.String(), "worker") {
		t.Fatalf("workers without detail: %s", rec.Body.String())
	}
}

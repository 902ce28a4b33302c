package httpapi

import (
	"context"
	"fmt"
	"github.com/narad/narad/adapters/fake"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/domain"
)

type stubMembers struct {
	views []membership.MemberView
	err   error
}

func (s stubMembers) List(context.Context) ([]membership.MemberView, error) { return s.views, s.err }

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

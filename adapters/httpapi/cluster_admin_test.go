package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/membership"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain/meta"
)

type nowClock struct{}

func (nowClock) Now() time.Time { return time.UnixMilli(1_700_000_100_000) }

// leaderView is a fake replica that knows n1 leads.
type leaderView struct{ *fake.MetaStore }

func (leaderView) Leader() (uint64, bool) { return meta.ReplicaID("n1"), true }

// adminCluster is a store with n voters n1..n<voters> (live member
// records) and topic t of 2 partitions on n1, partition 1 moving to n2.
func adminCluster(t *testing.T, voters int) (*fake.MetaStore, *gin.Engine, *gin.Engine) {
	t.Helper()
	s := fake.NewMetaStore()
	ctx := context.Background()
	var evs []meta.Event
	for i := 1; i <= voters; i++ {
		id := fmt.Sprintf("n%d", i)
		if err := s.AddVoter(ctx, meta.ReplicaID(id), id+":7943"); err != nil {
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
	s.SetLeader(true)
	s.SetLeaderSince(time.UnixMilli(1_700_000_000_000))
	v := leaderView{s}
	routes := ClusterAdminRoutes(membership.NewDecommissioner(v, nowClock{}), membership.NewForgetter(v, nowClock{}),
		moves.NewAborter(s, nowClock{}), s, zap.NewNop())
	open := NewEngine(zap.NewNop(), routes...)
	secured := NewEngineWith(EngineOptions{Log: zap.NewNop(), Security: Security{Enabled: true,
		Auth: stubAuth{user: "bob", pass: "pw", grants: []meta.Grant{{Action: "produce", Patterns: []string{"*"}}}}}}, routes...)
	return s, open, secured
}

var jsonHdr = map[string]string{"Content-Type": "application/json"}

func drainingOf(t *testing.T, s *fake.MetaStore, id string) bool {
	t.Helper()
	ms, _ := s.Members()
	for _, m := range ms {
		if m.ID == id {
			return m.Draining
		}
	}
	t.Fatalf("no member %s", id)
	return false
}

// Ensure the decommission routes' contract (api.md §2.17): 204 and the
// mark on a 4-voter cluster, DELETE clears it (conformance 145); unknown id
// 404, no credentials 401, non-admin 403 (146); 409 with below_min_voters
// on 3 voters and no change (233); dry_run answers the verdict and changes
// nothing, a bad dry_run or one on DELETE is 400 (234).
func TestDecommissionRoutes(t *testing.T) {
	s, e, secured := adminCluster(t, 4)
	const path = "/v1/cluster/members/n4/decommission"
	if rec := serve(e, "POST", path+"?dry_run=true", jsonHdr); rec.Code != 200 ||
		rec.Body.String() != `{"member":"n4","would_decommission":true,"reasons":[],"voter":true,"owned_partitions":0,"inbound_moves":0}`+"\n" {
		t.Fatalf("dry run: %d %s", rec.Code, rec.Body.String())
	}
	if drainingOf(t, s, "n4") {
		t.Fatal("a dry run marked the node")
	}
	if rec := serve(e, "POST", path, jsonHdr); rec.Code != 204 || !drainingOf(t, s, "n4") {
		t.Fatalf("decommission: %d %s", rec.Code, rec.Body.String())
	}
	if rec := serve(e, "DELETE", path, jsonHdr); rec.Code != 204 || drainingOf(t, s, "n4") {
		t.Fatalf("cancel: %d %s", rec.Code, rec.Body.String())
	}
	for _, c := range []struct {
		method, path string
		hdr          map[string]string
		code         int
		body         string
	}{
		{"POST", "/v1/cluster/members/n9/decommission", jsonHdr, 404, `{"error":"not found"}`},
		{"DELETE", "/v1/cluster/members/n9/decommission", jsonHdr, 404, `{"error":"not found"}`},
		{"POST", path + "?dry_run=maybe", jsonHdr, 400, `{"error":"invalid dry_run: must be true or false"}`},
		{"DELETE", path + "?dry_run=true", jsonHdr, 400, ""},
		{"POST", path, nil, 415, ""},
	} {
		if rec := serve(e, c.method, c.path, c.hdr); rec.Code != c.code || (c.body != "" && rec.Body.String() != c.body+"\n") {
			t.Errorf("%s %s: %d %s", c.method, c.path, rec.Code, rec.Body.String())
		}
	}
	if rec := serve(secured, "POST", path, jsonHdr); rec.Code != 401 {
		t.Errorf("no credentials: %d", rec.Code)
	}
	hdr := basic("bob", "pw")
	hdr["Content-Type"] = "application/json"
	if rec := serve(secured, "POST", path, hdr); rec.Code != 403 || !strings.Contains(rec.Body.String(), "admin privileges required") {
		t.Errorf("non-admin: %d %s", rec.Code, rec.Body.String())
	}

	s3, e3, _ := adminCluster(t, 3)
	rec := serve(e3, "POST", "/v1/cluster/members/n3/decommission", jsonHdr)
	var body struct {
		Error   string `json:"error"`
		Reasons []struct{ Code, Message string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 409 ||
		len(body.Reasons) != 1 || body.Reasons[0].Code != "below_min_voters" || body.Reasons[0].Message == "" || body.Error == "" {
		t.Fatalf("three voters: %d %s", rec.Code, rec.Body.String())
	}
	if drainingOf(t, s3, "n3") {
		t.Fatal("a refused decommission marked the node")
	}
}

// Ensure the forget and abort routes' contract (api.md §2.17): forget the
// leader 400, an unknown id 404, a member 409 (conformance 236); abort with
// no move 409, partition x 400, a topic without assignments 404 (235), and
// 202 with the move and a note on success.
func TestForgetAndAbortRoutes(t *testing.T) {
	_, e, _ := adminCluster(t, 3)
	for _, c := range []struct {
		path string
		code int
	}{
		{"/v1/cluster/members/n1/forget", 400},
		{"/v1/cluster/members/nobody/forget", 404},
		{"/v1/cluster/members/n2/forget", 409},
		{"/v1/cluster/moves/t/0/abort", 409},
		{"/v1/cluster/moves/t/x/abort", 400},
		{"/v1/cluster/moves/t/-1/abort", 400},
		{"/v1/cluster/moves/none/0/abort", 404},
		{"/v1/cluster/moves/t/1/abort?target=n3", 409},
	} {
		if rec := serve(e, "POST", c.path, jsonHdr); rec.Code != c.code {
			t.Errorf("%s: %d %s", c.path, rec.Code, rec.Body.String())
		}
	}
	rec := serve(e, "POST", "/v1/cluster/moves/t/1/abort?target=n2", jsonHdr)
	var body struct {
		Move moveJSON `json:"move"`
		Note string   `json:"note"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 202 || body.Note == "" ||
		body.Move != (moveJSON{Topic: "t", Partition: 1, From: "n1", To: "n2", FromStatus: "alive", ToStatus: "alive"}) {
		t.Fatalf("abort: %d %s", rec.Code, rec.Body.String())
	}
}

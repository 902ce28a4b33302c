package httpclient_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/narad/narad/adapters/httpclient"
)

// ensure that Members reads the api.md §2.17 listing.
func TestMembersReadsTheListing(t *testing.T) {
	t.Parallel()
	c, rec := newRecorder(t, "", jsonAnswer(200, `{"members":[{"id":"n1","addr":"10.0.0.5:7942","status":"alive","draining":false,"owned_partitions":6,"outbound_moves":1,"voter":true,"leader":true,"heartbeat_age_seconds":2}]}`))
	got, err := c.Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := httpclient.Member{ID: "n1", Addr: "10.0.0.5:7942", Status: "alive", OwnedPartitions: 6, OutboundMoves: 1, Voter: true, Leader: true, HeartbeatAgeSeconds: 2}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("members %+v", got)
	}
	if r := rec.requests()[0]; r.Method != http.MethodGet || r.Path != "/v1/cluster/members" {
		t.Fatalf("request %s %s", r.Method, r.Path)
	}
}

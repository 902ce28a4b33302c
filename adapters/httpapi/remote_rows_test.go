package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad/narad/application/remotes"
	"github.com/narad/narad/domain/meta"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A remote child's partition row is {partition,node,start_offset,
// next_offset,high_watermark,ack_frontier,state,last_success_at,
// blocked_at} in that order (api.md §2.11), an offset nobody could tell
// null.
func TestRemoteChildPartitionRowsJSON(t *testing.T) {
	l := remoteLink{
		stub: meta.Topic{Name: "orders-dr", Remote: &meta.RemoteLink{Name: "dr", Topic: "orders", From: "attach", Lanes: 1}},
		link: remotes.LinkState{State: "rejected_record", Partitions: []remotes.PartitionLink{
			{Partition: 0, Node: "n1", State: "running", BlockedAt: -1, StartOffset: 4, NextOffset: 9, HighWatermark: 11, AckFrontier: 7,
				LastOKMs: 1_765_000_000_000},
			{Partition: 1, Node: "n2", State: "rejected_record", BlockedAt: 41, StartOffset: 0, NextOffset: 41, HighWatermark: 50, AckFrontier: -1},
			{Partition: 2, Node: "", State: "unknown", BlockedAt: -1, StartOffset: 2, NextOffset: -1, HighWatermark: -1, AckFrontier: -1},
		}},
	}
	got := mustJSON(t, remoteChildView(l, true).Partitions)
	want := `[{"partition":0,"node":"n1","start_offset":4,"next_offset":9,"high_watermark":11,"ack_frontier":7,"state":"running",` +
		`"last_success_at":"2025-12-06T05:46:40Z","blocked_at":null},` +
		`{"partition":1,"node":"n2","start_offset":0,"next_offset":41,"high_watermark":50,"ack_frontier":null,"state":"rejected_record",` +
		`"last_success_at":null,"blocked_at":{"partition":1,"offset":41,"state":"rejected_record"}},` +
		`{"partition":2,"node":"","start_offset":2,"next_offset":null,"high_watermark":null,"ack_frontier":null,"state":"unknown",` +
		`"last_success_at":null,"blocked_at":null}]`
	if got != want {
		t.Fatalf("rows\n got %s\nwant %s", got, want)
	}
	if rows := remoteChildView(l, false).Partitions; rows != nil {
		t.Fatalf("rows without partitions=true: %+v", rows)
	}
}

// GET /v1/remotes names the deleted remotes a member still holds under
// lingering, [] when none (api.md §2.18).
func TestRemotesListingLingeringJSON(t *testing.T) {
	l := remotes.Listing{Lingering: []remotes.Lingering{{Name: "old", Nodes: []string{"n1", "n2"}}, {Name: "older", Nodes: []string{"n3"}}}}
	if got := mustJSON(t, listingView(l)["lingering"]); got != `["old","older"]` {
		t.Fatalf("lingering %s", got)
	}
	if got := mustJSON(t, listingView(remotes.Listing{})["lingering"]); got != `[]` {
		t.Fatalf("no lingering %s", got)
	}
}

// A dry run answers capabilities {"max_messages","zstd"} when the use case
// probed the target, and leaves them out otherwise (api.md §2.10.2).
func TestDryRunCapabilitiesJSON(t *testing.T) {
	body := map[string]any{"dry_run": true}
	withCapabilities(body, nil)
	if got := mustJSON(t, body); got != `{"dry_run":true}` {
		t.Fatalf("without capabilities %s", got)
	}
	withCapabilities(body, &remotes.Capabilities{MaxMessages: 1000, Zstd: true})
	if got := mustJSON(t, body); got != `{"capabilities":{"max_messages":1000,"zstd":true},"dry_run":true}` {
		t.Fatalf("with capabilities %s", got)
	}
}

// Over the routes: a deleted remote this node's credential cache still
// holds is listed under lingering.
func TestRemotesListingLingeringHTTP(t *testing.T) {
	e, _ := remotesEngine(t, false)
	if rec := remoteCall(e, "POST", "/v1/remotes", "root", createDR); rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "GET", "/v1/remotes", "root", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"lingering":[]`) {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "DELETE", "/v1/remotes/dr", "root", ""); rec.Code != 204 {
		t.Fatalf("delete: %d %s", rec.Code, rec.Body)
	}
	if rec := remoteCall(e, "GET", "/v1/remotes?nodes=false", "root", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"lingering":["dr"]`) {
		t.Fatalf("list after the delete: %d %s", rec.Code, rec.Body)
	}
}

package httpclient_test

import (
	"net/http"
	"testing"
)

// ensure that ListChildren reads a remote child's partition rows with
// their positions, an unknown one (null) as nil (api.md §2.11).
func TestListChildrenReadsPartitionPositions(t *testing.T) {
	body := `{"parent":"orders","children":[{"name":"orders-dr","delay_ms":0,"lag_messages":2,"lag_complete":false,` +
		`"remote":{"name":"dr","topic":"orders","from":"attach","lanes":1},"paused":false,"state":"unknown","blocked_at":null,` +
		`"target_verified_at":null,"unverified":false,"last_success_at":null,"lag_seconds":0,"source_drained":false,"partitions":[` +
		`{"partition":0,"node":"n1","start_offset":4,"next_offset":9,"high_watermark":11,"ack_frontier":7,"state":"running","last_success_at":null,"blocked_at":null},` +
		`{"partition":1,"node":"n2","start_offset":0,"next_offset":null,"high_watermark":null,"ack_frontier":null,"state":"unknown","last_success_at":null,"blocked_at":null}]}]}`
	c, rec := newRecorder(t, "root", jsonAnswer(http.StatusOK, body))
	l, err := c.ListChildren(t.Context(), "orders", true)
	if err != nil || len(l.Children) != 1 || !l.Children[0].IsRemote() || len(l.Children[0].Partitions) != 2 {
		t.Fatalf("%v %+v", err, l)
	}
	if q := rec.requests()[0].Query["partitions"]; len(q) != 1 || q[0] != "true" {
		t.Fatalf("query %v", rec.requests()[0].Query)
	}
	p0, p1 := l.Children[0].Partitions[0], l.Children[0].Partitions[1]
	if p0.StartOffset == nil || *p0.StartOffset != 4 || p0.NextOffset == nil || *p0.NextOffset != 9 || p0.HighWatermark == nil ||
		*p0.HighWatermark != 11 || p0.AckFrontier == nil || *p0.AckFrontier != 7 {
		t.Fatalf("partition 0 %+v", p0)
	}
	if p1.StartOffset == nil || *p1.StartOffset != 0 || p1.NextOffset != nil || p1.HighWatermark != nil || p1.AckFrontier != nil {
		t.Fatalf("partition 1 %+v", p1)
	}
}

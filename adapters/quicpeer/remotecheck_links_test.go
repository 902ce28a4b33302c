package quicpeer

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/ports"
)

// ensure that a links reply carries each cursor's next offset and the
// parent partition's high watermark across two nodes (op 36, mode links),
// unknown ones as -1.
func TestRemoteLinksCarryPositions(t *testing.T) {
	t.Parallel()
	want := []ports.RemoteCursorReport{
		{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: 2, NextOffset: 9, HighWatermark: 11},
		{Partition: 1, Child: "orders-dr", State: "unknown", BlockedAt: -1, Lag: -1, NextOffset: -1, HighWatermark: -1},
		{Partition: 2, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: 0, NextOffset: 0, HighWatermark: 0},
	}
	srv, _ := newServer(t, ServerOptions{})
	RegisterRemoteCheck(srv, fakeLinks(want))
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	got, err := p.RemoteLinks(context.Background(), "owner", "orders")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v (%v), want %+v", got, err, want)
	}
}

// ensure that a links reply of an owner of an earlier build, without
// next_offset and high_watermark, still decodes, those positions unknown
// (-1); and that a position below -1 is refused.
func TestRemoteLinksDecodeWithoutPositions(t *testing.T) {
	t.Parallel()
	old := `{"cursors":[{"partition":3,"child":"orders-dr","state":"running","blocked_at":-1,"last_ok_ms":5,"last_check_ms":6,"lag":7,"oldest_unsent_ms":8}]}`
	got, err := decodeRemoteLinks([]byte(old))
	want := []ports.RemoteCursorReport{{Partition: 3, Child: "orders-dr", State: "running", BlockedAt: -1, LastOKMs: 5, LastCheckMs: 6, Lag: 7,
		OldestUnsentMs: 8, NextOffset: -1, HighWatermark: -1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("old reply: %+v (%v)", got, err)
	}
	for _, field := range []string{"next_offset", "high_watermark"} {
		var body map[string][]map[string]any
		if err := json.Unmarshal([]byte(old), &body); err != nil {
			t.Fatal(err)
		}
		body["cursors"][0][field] = -2
		b, _ := json.Marshal(body)
		if _, err := decodeRemoteLinks(b); !errors.Is(err, ErrBadPayload) {
			t.Fatalf("%s -2: %v", field, err)
		}
	}
	// What a reply sends for unknown positions reads back as unknown.
	b, _ := json.Marshal(linksReply(want))
	if got, err := decodeRemoteLinks(b); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip %s: %+v (%v)", b, got, err)
	}
}

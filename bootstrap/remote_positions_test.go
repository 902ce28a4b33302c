package bootstrap

import (
	"context"
	"reflect"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that an owner's report of its remote child cursors carries each
// cursor's next offset and the parent partition's high watermark (api.md
// §2.11 partitions rows), -1 where the owner cannot say: a cursor the
// fan-out engine does not run or that has not found its start, a log it
// cannot peek.
func TestRemoteLinksReportPositions(t *testing.T) {
	logs := fake.NewPartitionLogs()
	parent := domain.PartitionRef{Topic: "orders", TopicID: "00000000000000a1"}
	p0 := parent
	recs := []domain.Record{{Payload: []byte("a"), CommittedAtMs: 1000}, {Payload: []byte("b"), CommittedAtMs: 2000}, {Payload: []byte("c"), CommittedAtMs: 3000}}
	if _, err := logs.CommitDurable(context.Background(), p0, recs); err != nil {
		t.Fatal(err)
	}
	shipped := func() []ports.RemoteCursorReport {
		return []ports.RemoteCursorReport{
			{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: -1},
			{Partition: 0, Child: "orders-eu", State: "running", BlockedAt: -1, Lag: -1},
			{Partition: 1, Child: "orders-dr", State: "unavailable", BlockedAt: -1, Lag: -1},
		}
	}
	cursors := []fanout.CursorStatus{
		{Parent: "orders", Partition: 0, Child: "orders-dr", NextOffset: 1, Lag: 2},
		{Parent: "orders", Partition: 0, Child: "orders-eu", NextOffset: -1, Lag: -1}, // not anchored yet
		{Parent: "other", Partition: 1, Child: "orders-dr", NextOffset: 7, Lag: 0},
	}
	got := withPositions(shipped(), cursors, parent, logs)
	want := []ports.RemoteCursorReport{
		{Partition: 0, Child: "orders-dr", State: "running", BlockedAt: -1, Lag: 2, OldestUnsentMs: 2000, NextOffset: 1, HighWatermark: 3},
		{Partition: 0, Child: "orders-eu", State: "running", BlockedAt: -1, Lag: -1, NextOffset: -1, HighWatermark: 3},
		// partition 1 never took a record and has no cursor of orders
		{Partition: 1, Child: "orders-dr", State: "unavailable", BlockedAt: -1, Lag: -1, NextOffset: -1, HighWatermark: 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	// Without the parent's incarnation the logs are not read; a log that
	// cannot be peeked has no high watermark to report.
	got = withPositions(shipped(), cursors, parent, nil)
	if got[0].NextOffset != 1 || got[0].HighWatermark != -1 || got[0].OldestUnsentMs != 0 || got[0].Lag != 2 {
		t.Fatalf("without logs: %+v", got[0])
	}
	closed := fake.NewPartitionLogs()
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range withPositions(shipped(), cursors, parent, closed) {
		if r.HighWatermark != -1 || r.OldestUnsentMs != 0 {
			t.Fatalf("closed logs: %+v", r)
		}
	}
}

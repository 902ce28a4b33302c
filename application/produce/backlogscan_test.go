package produce_test

import (
	"context"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// The backlog scan counts one topic's records from the checkpoint to the
// durable end (internals.md §7.9): records below the checkpoint were
// committed and do not count, other topics do not count, and concurrent
// askers of one topic all get the answer.
func TestBacklogScanCountsOneTopicAboveTheCheckpoint(t *testing.T) {
	w := fake.NewWAL()
	ctx := context.Background()
	recs := make([]domain.IngressRecord, 0, 600)
	for i := range 600 {
		topic := "orders"
		if i%3 == 0 {
			topic = "audit"
		}
		recs = append(recs, domain.IngressRecord{Topic: topic, TopicID: "00000000000000a1", Payload: []byte("x")})
	}
	if _, err := w.AppendMany(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := w.StoreCheckpoint(300); err != nil {
		t.Fatal(err)
	}
	s := produce.NewBacklogScanner(w)
	var wg sync.WaitGroup
	got := make([]ports.TopicBacklog, 4)
	for i := range got {
		wg.Go(func() {
			b, err := s.TopicBacklog(ctx, "orders")
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for _, b := range got {
		if b != (ports.TopicBacklog{Records: 200, Complete: true}) {
			t.Fatalf("orders: %+v", got)
		}
	}
	if b, _ := s.TopicBacklog(ctx, "none"); b != (ports.TopicBacklog{Complete: true}) {
		t.Fatalf("a topic without records: %+v", b)
	}
	if err := w.StoreCheckpoint(600); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.TopicBacklog(ctx, "orders"); b != (ports.TopicBacklog{Complete: true}) {
		t.Fatalf("everything committed: %+v", b)
	}
}

// A scan whose context ends before it finishes answers incomplete or the
// context's error, never a count that claims the end.
func TestBacklogScanStopsIncomplete(t *testing.T) {
	w := fake.NewWAL()
	if _, err := w.AppendMany(context.Background(), []domain.IngressRecord{{Topic: "orders", TopicID: "00000000000000a1", Payload: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, err := produce.NewBacklogScanner(w).TopicBacklog(ctx, "orders")
	if err == nil && b.Complete {
		t.Fatalf("a cancelled scan claimed the end: %+v", b)
	}
}

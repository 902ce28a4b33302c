package metawatch_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/narad/narad/adapters/metastore/metawatch"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Ensure that subscribers get changes in order and Close ends them cleanly.
func TestHubDeliversInOrder(t *testing.T) {
	t.Parallel()
	var h metawatch.Hub
	s, err := h.Subscribe(4)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 3; i++ {
		h.Publish(ports.MetaChange{Index: i})
	}
	for i := uint64(1); i <= 3; i++ {
		if c := <-s.C(); c.Index != i {
			t.Fatalf("got index %d, want %d", c.Index, i)
		}
	}
	s.Close()
	s.Close()
	if _, open := <-s.C(); open || s.Err() != nil {
		t.Fatalf("after Close: open=%v err=%v", open, s.Err())
	}
	if h.Len() != 0 {
		t.Fatalf("hub still holds %d subscriptions", h.Len())
	}
}

// Ensure that a slow subscriber is dropped with ErrWatchLagged instead of
// blocking the publisher, while others keep receiving.
func TestHubDropsLaggingSubscriber(t *testing.T) {
	t.Parallel()
	var h metawatch.Hub
	slow, _ := h.Subscribe(1)
	fast, _ := h.Subscribe(8)
	h.Publish(ports.MetaChange{Index: 1})
	h.Publish(ports.MetaChange{Index: 2})
	<-slow.C()
	if _, open := <-slow.C(); open {
		t.Fatal("lagging subscription still open")
	}
	if !errors.Is(slow.Err(), meta.ErrWatchLagged) {
		t.Fatalf("Err = %v", slow.Err())
	}
	if c := <-fast.C(); c.Index != 1 {
		t.Fatalf("fast got %d", c.Index)
	}
	h.Close(nil)
	if _, err := h.Subscribe(1); !errors.Is(err, meta.ErrStopped) {
		t.Fatalf("Subscribe after Close: %v", err)
	}
	<-fast.C()
	if _, open := <-fast.C(); open || !errors.Is(fast.Err(), meta.ErrStopped) {
		t.Fatalf("fast after Close: open=%v err=%v", open, fast.Err())
	}
}

package fake_test

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the fake answers owned partitions' cursors at the epoch
// asked in the port's order, leaves other partitions and epochs
// unreported, refuses another incarnation, fails a failed node, serves one
// node's view through On, and holds blocked calls until released.
func TestPeerFanoutLagScripts(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerFanoutLag()
	ctx := context.Background()
	ref := domain.PartitionRef{Topic: "p", TopicID: "0123456789abcdef", Partition: 1}
	f.Own("n2", ref, 9)
	f.Cursor("n2", ref, "c", ports.FanoutCursor{Epoch: "e1", NextOffset: 4})
	children := []ports.ChildEpoch{{Child: "c", Epoch: "e1"}, {Child: "c", Epoch: "e0"}, {Child: "d", Epoch: "e1"}}
	got, err := f.FanoutLag(ctx, "n2", "p", "", []int32{0, 1}, children)
	want := []ports.CursorLag{{}, {}, {}, {Reported: true, NextOffset: 4, HighWatermark: 9}, {}, {}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if got, err := f.On("n2").FanoutLag(ctx, "p", ref.TopicID, []int32{1}, children[:1]); err != nil || !reflect.DeepEqual(got, want[3:4]) {
		t.Fatalf("node view: %+v, %v", got, err)
	}
	if _, err := f.FanoutLag(ctx, "n2", "p", "fedcba9876543210", []int32{1}, children); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("other incarnation: %v", err)
	}
	f.Fail("n2", nil)
	if _, err := f.FanoutLag(ctx, "n2", "p", "", []int32{1}, children); !errors.Is(err, fake.ErrFakePeerFailure) {
		t.Fatalf("failed node: %v", err)
	}
	release := f.Block()
	done := make(chan error, 1)
	go func() {
		_, err := f.FanoutLag(ctx, "n3", "p", "", nil, nil)
		done <- err
	}()
	for f.InFlight() != 1 {
		select {
		case err := <-done:
			t.Fatalf("blocked call returned: %v", err)
		default:
			runtime.Gosched() // polling, not synchronization
		}
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("released call: %v", err)
	}
	if n := len(f.Calls()); n != 5 || f.MostInFlight() != 1 {
		t.Fatalf("%d calls, %d at most in flight", n, f.MostInFlight())
	}
}

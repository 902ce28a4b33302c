package fake_test

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
)

// ensure that the fake peer frontiers answer what was set, in order,
// refuse another node's partition and another incarnation like the real
// owner, fail a failed node, record each call with its deadline, and hold
// blocked calls until released.
func TestPeerFrontiersScripts(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerFrontiers()
	ctx := context.Background()
	ref := domain.PartitionRef{Topic: "t", TopicID: "0123456789abcdef", Partition: 2}
	f.Set("n2", ref, 9)
	f.Set("n2", domain.PartitionRef{Topic: "t", TopicID: ref.TopicID, Partition: 0}, 0)
	got, err := f.Unconsumed(ctx, "n2", "t", "", []int32{2, 0, 2})
	if err != nil || !reflect.DeepEqual(got, []int64{9, 0, 9}) {
		t.Fatalf("set offsets: %v, %v", got, err)
	}
	if _, err := f.Unconsumed(ctx, "n2", "t", "", []int32{2, 1}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("unset partition: %v", err)
	}
	if _, err := f.Unconsumed(ctx, "n3", "t", "", []int32{2}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("another node: %v", err)
	}
	if _, err := f.Unconsumed(ctx, "n2", "t", "fedcba9876543210", []int32{2}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("other incarnation: %v", err)
	}
	dctx, cancelD := context.WithTimeout(ctx, time.Hour)
	defer cancelD()
	if _, err := f.Unconsumed(dctx, "n2", "t", ref.TopicID, []int32{2}); err != nil {
		t.Fatalf("with a deadline: %v", err)
	}
	if calls := f.Calls(); calls[4].Deadline.IsZero() || calls[4].ID != ref.TopicID || !reflect.DeepEqual(calls[4].Parts, []int32{2}) {
		t.Fatalf("recorded call %+v", calls[4])
	}
	f.Fail("n2", nil)
	if _, err := f.Unconsumed(ctx, "n2", "t", "", []int32{2}); !errors.Is(err, fake.ErrFakePeerFailure) {
		t.Fatalf("failed node: %v", err)
	}
	release := f.Block()
	done := make(chan error, 1)
	go func() {
		_, err := f.Unconsumed(ctx, "n3", "t", "", nil)
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
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	release = f.Block()
	defer release()
	if _, err := f.Unconsumed(cctx, "n3", "t", "", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked call of an ended context: %v", err)
	}
	if n, most := len(f.Calls()), f.MostInFlight(); n != 8 || most != 1 {
		t.Fatalf("recorded %d calls, at most %d at once", n, most)
	}
}

package fake_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that the fake peer stats answer what was set, in order, refuse
// another node's partition and another incarnation like the real owner,
// fail a failed node, and hold blocked calls until released.
func TestPeerStatsScripts(t *testing.T) {
	t.Parallel()
	f := fake.NewPeerStats()
	ctx := context.Background()
	ref := domain.PartitionRef{Topic: "t", TopicID: "0123456789abcdef", Partition: 2}
	f.Set("n2", ref, ports.LogStats{HighWatermark: 9})
	got, err := f.PartitionStats(ctx, "n2", "t", "", []int32{2, 2})
	if err != nil || len(got) != 2 || got[0].HighWatermark != 9 || got[1].HighWatermark != 9 {
		t.Fatalf("set stats: %+v, %v", got, err)
	}
	if _, err := f.PartitionStats(ctx, "n2", "t", "", []int32{2, 1}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("unset partition: %v", err)
	}
	if _, err := f.PartitionStats(ctx, "n2", "t", "fedcba9876543210", []int32{2}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("other incarnation: %v", err)
	}
	f.Fail("n2", nil)
	if _, err := f.PartitionStats(ctx, "n2", "t", "", []int32{2}); !errors.Is(err, fake.ErrFakePeerFailure) {
		t.Fatalf("failed node: %v", err)
	}
	release := f.Block()
	done := make(chan error, 1)
	go func() {
		_, err := f.PartitionStats(ctx, "n3", "t", "", nil)
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
	if _, err := f.PartitionStats(cctx, "n3", "t", "", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("blocked call of an ended context: %v", err)
	}
	if n, most := len(f.Calls()), f.MostInFlight(); n != 6 || most != 1 {
		t.Fatalf("recorded %d calls, at most %d at once", n, most)
	}
}

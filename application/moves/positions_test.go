package moves

import (
	"log/slog"
	"slices"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// Ensure that an install's positions are lowered to its boundary
// (internals.md §11.4): the frontier to hwm-1, acked-ahead offsets below
// hwm kept and the rest dropped, cursors past hwm lowered to it, and
// positions within it left alone.
func TestClampLowersPositionsToTheBoundary(t *testing.T) {
	ref := domain.PartitionRef{Topic: "t", TopicID: "00000000000000a1", Partition: 0}
	offsets, cursors := fake.NewOffsets(), fake.NewFanoutCursors()
	write := func(o ports.ConsumerOffsets) {
		t.Helper()
		if err := offsets.Write(ref, o); err != nil {
			t.Fatal(err)
		}
		if err := offsets.Sync(ref); err != nil {
			t.Fatal(err)
		}
		if err := offsets.Level(ref, o.Committed); err != nil {
			t.Fatal(err)
		}
	}
	p := Positions{Offsets: offsets, Cursors: cursors}
	log := slog.New(slog.DiscardHandler)

	write(ports.ConsumerOffsets{Committed: 40, AckedAhead: []int64{45, 52}})
	cursors.Put(ref, "ahead", ports.FanoutCursor{Epoch: "e", NextOffset: 60})
	cursors.Put(ref, "behind", ports.FanoutCursor{Epoch: "e", NextOffset: 30})
	if err := p.clamp(ref, 50, log); err != nil {
		t.Fatal(err)
	}
	if o, err := offsets.Load(ref); err != nil || o.Committed != 40 || !slices.Equal(o.AckedAhead, []int64{45}) {
		t.Fatalf("after the clamp: %+v, %v", o, err)
	}
	if c, _ := cursors.Get(ref, "ahead"); c.NextOffset != 50 || c.Epoch != "e" {
		t.Fatalf("cursor past the boundary: %+v", c)
	}
	if c, _ := cursors.Get(ref, "behind"); c.NextOffset != 30 {
		t.Fatalf("cursor within the boundary: %+v", c)
	}

	write(ports.ConsumerOffsets{Committed: 70})
	if err := p.clamp(ref, 50, log); err != nil {
		t.Fatal(err)
	}
	if o, err := offsets.Load(ref); err != nil || o.Committed != 49 || len(o.AckedAhead) != 0 {
		t.Fatalf("a frontier past the boundary: %+v, %v", o, err)
	}
}

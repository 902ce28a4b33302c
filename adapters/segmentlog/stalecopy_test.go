package segmentlog

import (
	"slices"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// Ensure that the stale-copy sweep's store side lists the partition
// directories with their incarnation, deletes a copy only at or below the
// guard, sets any other aside (closing an open log first), and refuses a
// copy of another incarnation (internals.md §11.6).
func TestDropStaleCopy(t *testing.T) {
	fsys := vfs.NewMem()
	s := mustOpen(t, testOptions(fsys, newFakeClock()))
	defer func() { _ = s.Close() }()
	behind, ahead, open := testRef(0), testRef(1), testRef(2)
	for _, ref := range []domain.PartitionRef{behind, ahead, open} {
		mustCommit(t, s, ref, batch(int(ref.Partition), 10))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, testOptions(fsys, newFakeClock()))
	refs, err := s.LocalPartitions()
	if err != nil || !slices.Equal(refs, []domain.PartitionRef{behind, ahead, open}) {
		t.Fatalf("local partitions %v, %v", refs, err)
	}
	if _, err := s.DropStaleCopy(domain.PartitionRef{Topic: "orders", TopicID: "ffffffffffffffff", Partition: 0}, true, 100); err == nil {
		t.Fatal("a drop named with another incarnation went through")
	}
	// Recovered boundary 10, guard 10: deleted.
	if deleted, err := s.DropStaleCopy(behind, true, 10); err != nil || !deleted {
		t.Fatalf("reclaim at the guard: %v %v", deleted, err)
	}
	// Boundary 10 past guard 9: the copy holds what the owner does not
	// vouch for, so it is set aside even though reclaim was asked.
	if deleted, err := s.DropStaleCopy(ahead, true, 9); err != nil || deleted {
		t.Fatalf("reclaim past the guard: %v %v", deleted, err)
	}
	// An open log is closed first; quarantine never deletes.
	mustCommit(t, s, open, batch(7, 1))
	if deleted, err := s.DropStaleCopy(open, false, 100); err != nil || deleted {
		t.Fatalf("quarantine: %v %v", deleted, err)
	}
	for _, ref := range []domain.PartitionRef{behind, ahead, open} {
		if _, err := fsys.Stat(partDir(ref)); err == nil {
			t.Errorf("%v is still on the partition path", ref)
		}
	}
	for ref, kept := range map[domain.PartitionRef]bool{behind: false, ahead: true, open: true} {
		if _, err := fsys.Stat(partDir(ref) + quarantineSuffix); (err == nil) != kept {
			t.Errorf("%v set aside: %v, want %v", ref, err == nil, kept)
		}
	}
	if refs, err := s.LocalPartitions(); err != nil || len(refs) != 0 {
		t.Fatalf("after the drops: %v, %v", refs, err)
	}
	if deleted, err := s.DropStaleCopy(behind, true, 10); err != nil || deleted {
		t.Fatalf("a partition with no directory: %v %v", deleted, err)
	}
}

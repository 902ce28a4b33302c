package segmentlog

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
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

// Ensure that an install whose flip did not commit goes back to staging
// whole (internals.md §11.5): the partition path is empty again, staging
// resumes from the copy (its sizes are those installed), the next install
// serves every record, and a take-back naming another incarnation moves
// nothing.
func TestUninstallReturnsTheCopyToStaging(t *testing.T) {
	src := mustOpen(t, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = src.Close() }()
	dstFS := vfs.NewMem()
	dst := mustOpen(t, testOptions(dstFS, newFakeClock()))
	defer func() { _ = dst.Close() }()
	ref := testRef(3)
	recs := batch(5, 20)
	mustCommit(t, src, ref, recs)
	hwm := stageCopy(t, src, dst, ref, 1<<20)
	l, err := src.TransferListing(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Install(ref, ports.MoveMarker{PromotedHighWatermark: hwm}); err != nil {
		t.Fatal(err)
	}
	checkRange(t, dst, ref, 0, recs) // opened: the take-back closes the log first
	wrong := ref
	wrong.TopicID = "ffffffffffffffff"
	if err := dst.Uninstall(wrong); err == nil {
		t.Fatal("a take-back naming another incarnation went through")
	}
	if err := dst.Uninstall(ref); err != nil {
		t.Fatal(err)
	}
	if _, err := dstFS.Stat(partDir(ref)); err == nil {
		t.Fatal("the copy is still on the partition path")
	}
	for _, f := range l.Segments {
		if n, err := dst.StagingSize(ref, f.Name); err != nil || n != f.Size {
			t.Fatalf("staged %s: %d bytes, %v; want %d", f.Name, n, err, f.Size)
		}
	}
	if err := dst.Install(ref, ports.MoveMarker{PromotedHighWatermark: hwm}); err != nil {
		t.Fatal(err)
	}
	checkRange(t, dst, ref, 0, recs)
}

// Ensure that the staging directories are listed by topic and partition,
// topic names with dashes included, and other names skipped.
func TestStagedPartitions(t *testing.T) {
	fsys := vfs.NewMem()
	s := mustOpen(t, testOptions(fsys, newFakeClock()))
	defer func() { _ = s.Close() }()
	if got, err := s.StagedPartitions(); err != nil || len(got) != 0 {
		t.Fatalf("no staging: %v, %v", got, err)
	}
	for _, ref := range []domain.PartitionRef{{Topic: "orders-dr", Partition: 12}, {Topic: "a", Partition: 0}} {
		if err := s.StagingReset(ref); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.MkdirAll("/data/.moves/not-a-partition"); err != nil {
		t.Fatal(err)
	}
	got, err := s.StagedPartitions()
	slices.SortFunc(got, func(a, b domain.PartitionRef) int { return strings.Compare(a.Topic, b.Topic) })
	if err != nil || !slices.Equal(got, []domain.PartitionRef{{Topic: "a"}, {Topic: "orders-dr", Partition: 12}}) {
		t.Fatalf("staged %v, %v", got, err)
	}
	if err := s.StagingRemove(got[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.StagedPartitions(); len(got) != 1 {
		t.Fatalf("after a removal: %v", got)
	}
}

// Ensure that a move ships a side file only once it verifies (a cursor
// caught mid-write is read again, one that never verifies is refused as
// retryable), and that an install drops a staged side file that does not
// verify (internals.md §11.4).
func TestSideFilesAreVerified(t *testing.T) {
	fsys := vfs.NewMem()
	opts := testOptions(fsys, newFakeClock())
	opts.VerifySide = func(name string, b []byte) error {
		if strings.HasPrefix(string(b), "good") {
			return nil
		}
		return errors.New("torn")
	}
	s := mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	ref := testRef(4)
	mustCommit(t, s, ref, batch(1, 3))
	write := func(name, b string) {
		t.Helper()
		if err := vfs.WriteFileAtomic(fsys, filepath.Join(partDir(ref), name), []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	write("fanout-audit.offset", "good cursor")
	if b, err := s.ReadTransferChunk(ref, "fanout-audit.offset", 0, 1<<20); err != nil || string(b) != "good cursor" {
		t.Fatalf("a verified cursor: %q, %v", b, err)
	}
	write("fanout-audit.offset", "torn cursor")
	_, err := s.ReadTransferChunk(ref, "fanout-audit.offset", 0, 1<<20)
	wantErr(t, err, domain.ErrUnavailable, "a cursor that never verifies")

	// The destination: one good and one torn side file staged.
	if err := s.StagingReset(ref); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{"fanout-audit.offset": "torn", "fanout-dr.offset": "good", segmentName(0): ""} {
		if err := s.StagingWrite(ref, name, 0, []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Install(ref, ports.MoveMarker{}); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat(filepath.Join(partDir(ref), "fanout-audit.offset")); err == nil {
		t.Fatal("a torn side file was installed")
	}
	if _, err := fsys.Stat(filepath.Join(partDir(ref), "fanout-dr.offset")); err != nil {
		t.Fatalf("a good side file was dropped: %v", err)
	}
}

package segmentlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// stageCopy copies what src lists of ref, in chunks of chunk bytes, into
// dst's staging for ref, as a move's destination does before it installs.
func stageCopy(t *testing.T, src, dst *Store, ref domain.PartitionRef, chunk int) int64 {
	t.Helper()
	l, err := src.TransferListing(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.StagingReset(ref); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(l.Segments, l.Side...) {
		for off := int64(0); off < f.Size; {
			b, err := src.ReadTransferChunk(ref, f.Name, off, min(chunk, int(f.Size-off)))
			if err != nil || len(b) == 0 {
				t.Fatalf("chunk of %s at %d: %d bytes, %v", f.Name, off, len(b), err)
			}
			if err := dst.StagingWrite(ref, f.Name, off, b); err != nil {
				t.Fatal(err)
			}
			off += int64(len(b))
		}
	}
	return l.HighWatermark
}

// Ensure that a partition copied byte for byte from its transfer listing
// (internals.md §11.3: sealed segments whole, the active one to its last
// visible frame, the exact high watermark, the side files) and installed
// on another store opens there with every committed record at its offset
// and takes new commits after them, with its side files (receive counts
// included, a compaction's leftover .tmp not); the destination's old copy
// is set aside, not deleted.
func TestTransferCopyRecoversEveryCommittedRecord(t *testing.T) {
	srcFS, dstFS := vfs.NewMem(), vfs.NewMem()
	opts := testOptions(srcFS, newFakeClock())
	opts.SegmentMaxBytes = 4 << 10
	src := mustOpen(t, opts)
	defer func() { _ = src.Close() }()
	ref := testRef(3)
	var all []domain.Record
	for i := range 12 {
		b := batch(i, 20)
		mustCommit(t, src, ref, b)
		all = append(all, b...)
	}
	l, err := src.TransferListing(ref)
	if err != nil || len(l.Segments) < 3 || l.HighWatermark != int64(len(all)) {
		t.Fatalf("listing %+v, %v: want several segments and HWM %d", l, err, len(all))
	}

	// The destination holds an old copy of the partition (it owned it
	// once): the install sets it aside.
	dst := mustOpen(t, testOptions(dstFS, newFakeClock()))
	defer func() { _ = dst.Close() }()
	mustCommit(t, dst, ref, batch(50, 3))
	for name, b := range map[string]string{
		"fanout-orders-dr.offset": "cursor",
		"consumer.receives":       "receive counts",
		"consumer.receives.tmp":   "a compaction that never finished",
	} {
		if err := vfs.WriteFileAtomic(srcFS, filepath.Join(partDir(ref), name), []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	// The receive counts (adapters/receivelog) move with the partition; a
	// compaction's leftover does not.
	side, err := src.TransferListing(ref)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]int64{}
	for _, f := range side.Side {
		listed[f.Name] = f.Size
	}
	if listed["consumer.receives"] != int64(len("receive counts")) || listed["fanout-orders-dr.offset"] != int64(len("cursor")) {
		t.Fatalf("side files listed: %+v", side.Side)
	}
	if _, ok := listed["consumer.receives.tmp"]; ok {
		t.Fatalf("a leftover .tmp is listed: %+v", side.Side)
	}
	hwm := stageCopy(t, src, dst, ref, 777)
	if hwm != int64(len(all)) {
		t.Fatalf("copied boundary %d", hwm)
	}
	if l.Marker != nil {
		t.Fatalf("a partition that never moved lists a marker: %+v", l.Marker)
	}
	marker := ports.MoveMarker{PromotedHighWatermark: hwm, Links: []ports.MarkerLink{{Child: "orders-dr", Epoch: "e1"}}}
	if err := dst.Install(ref, marker); err != nil {
		t.Fatal(err)
	}
	checkRange(t, dst, ref, 0, all)
	// The install's marker is listed with the partition (a former owner's
	// stale-copy sweep reads it) and readable on its own (fan-out cursors).
	if l, err := dst.TransferListing(ref); err != nil || l.Marker == nil || l.Marker.PromotedHighWatermark != hwm || !l.Marker.Has("orders-dr", "e1") {
		t.Fatalf("listing after install: %+v, %v", l.Marker, err)
	}
	if m, ok, err := dst.MoveMarker(ref); err != nil || !ok || m.PromotedHighWatermark != hwm {
		t.Fatalf("marker %+v %v %v", m, ok, err)
	}
	if b, err := vfs.ReadFile(dstFS, filepath.Join(partDir(ref), "fanout-orders-dr.offset")); err != nil || string(b) != "cursor" {
		t.Fatalf("the cursor file moved as %q, %v", b, err)
	}
	if b, err := vfs.ReadFile(dstFS, filepath.Join(partDir(ref), "consumer.receives")); err != nil || string(b) != "receive counts" {
		t.Fatalf("the receive counts moved as %q, %v", b, err)
	}
	if _, err := dstFS.Stat(filepath.Join(partDir(ref), "consumer.receives.tmp")); err == nil {
		t.Fatal("a leftover .tmp moved with the partition")
	}
	if _, err := dstFS.Stat(partDir(ref) + quarantineSuffix); err != nil {
		t.Fatalf("the old copy was not set aside: %v", err)
	}
	// A freeze left from when this store was the partition's source ends
	// with the install: the new owner's commits go through.
	if _, _, err := dst.Freeze(ref, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := dst.StagingReset(ref); err != nil {
		t.Fatal(err)
	}
	stageCopy(t, src, dst, ref, 1<<20)
	if err := dst.Install(ref, marker); err != nil {
		t.Fatal(err)
	}
	next := batch(99, 5)
	if first := mustCommit(t, dst, ref, next); first != int64(len(all)) {
		t.Fatalf("next commit at %d, want %d", first, len(all))
	}
	checkRange(t, dst, ref, int64(len(all)), next)
}

// Ensure that a listing of a closed log opens it first (the recovered
// boundary, never 0), and that chunk reads refuse every name but a
// segment's, read nothing past the end and report a removed segment gone.
func TestTransferListingAndChunkEdges(t *testing.T) {
	fsys := vfs.NewMem()
	opts := testOptions(fsys, newFakeClock())
	s := mustOpen(t, opts)
	ref := testRef(0)
	mustCommit(t, s, ref, batch(1, 10))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	l, err := s.TransferListing(ref)
	if err != nil || l.HighWatermark != 10 || len(l.Segments) != 1 || l.Segments[0].Name != segmentName(0) {
		t.Fatalf("listing of a closed log: %+v, %v", l, err)
	}
	for _, name := range []string{"../incarnation", hwmFileName, "fanout-../x.offset", "00000000000000000000.log/../x", ""} {
		_, err := s.ReadTransferChunk(ref, name, 0, 10)
		wantErr(t, err, domain.ErrInvalidArgument, "chunk of "+name)
	}
	_, err = s.ReadTransferChunk(ref, segmentName(0), -1, 10)
	wantErr(t, err, domain.ErrInvalidArgument, "negative offset")
	if b, err := s.ReadTransferChunk(ref, segmentName(0), l.Segments[0].Size, 10); err != nil || len(b) != 0 {
		t.Fatalf("read at the end: %d bytes, %v", len(b), err)
	}
	_, err = s.ReadTransferChunk(ref, segmentName(12345), 0, 10)
	wantErr(t, err, domain.ErrOffsetGone, "a missing segment")
}

// Ensure that a freeze refuses commits with nothing appended while it
// holds, that its token re-arms it and no other token does, that the
// listing it returns includes a commit that was in flight, and that
// commits resume once it lapses (internals.md §11.3 steps 3-5).
func TestFreezeStopsCommitsUntilItLapses(t *testing.T) {
	clock := newFakeClock()
	s := mustOpen(t, testOptions(vfs.NewMem(), clock))
	defer func() { _ = s.Close() }()
	ref := testRef(1)
	mustCommit(t, s, ref, batch(1, 4))
	token, l, err := s.Freeze(ref, "", 30*time.Second)
	if err != nil || token == "" || l.HighWatermark != 4 {
		t.Fatalf("freeze: %q %+v %v", token, l, err)
	}
	_, err = s.CommitDurable(context.Background(), ref, batch(2, 1))
	wantErr(t, err, domain.ErrUnavailable, "a commit while frozen")
	if b, err := s.Bounds(ref); err != nil || !b.Frozen {
		t.Fatalf("bounds while frozen: %+v, %v (new leases must stop)", b, err)
	}
	if hwm := hwmBounds(t, s, ref); hwm != 4 {
		t.Fatalf("high watermark %d after a refused commit", hwm)
	}
	clock.Advance(20 * time.Second)
	if again, l, err := s.Freeze(ref, token, 30*time.Second); err != nil || again != token || l.HighWatermark != 4 {
		t.Fatalf("re-arm: %q %+v %v", again, l, err)
	}
	_, _, err = s.Freeze(ref, "0000000000000000", 30*time.Second)
	wantErr(t, err, domain.ErrConflict, "another token")
	clock.Advance(20 * time.Second) // 40 s after the start, 20 s after the re-arm
	_, err = s.CommitDurable(context.Background(), ref, batch(3, 1))
	wantErr(t, err, domain.ErrUnavailable, "a commit within the re-armed freeze")
	clock.Advance(11 * time.Second)
	if b, err := s.Bounds(ref); err != nil || b.Frozen {
		t.Fatalf("bounds after the freeze lapsed: %+v, %v", b, err)
	}
	mustCommit(t, s, ref, batch(4, 1))
	_, _, err = s.Freeze(ref, token, 30*time.Second)
	wantErr(t, err, domain.ErrConflict, "re-arming a lapsed freeze")
}

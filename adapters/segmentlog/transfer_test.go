package segmentlog

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// copyPartition copies what src lists of ref, in chunks of chunk bytes, into
// dst's directory for ref with an hwm file holding the listed boundary, as
// a move's destination would before installing it.
func copyPartition(t *testing.T, src *Store, dst vfs.FS, ref domain.PartitionRef, chunk int) int64 {
	t.Helper()
	l, err := src.TransferListing(ref)
	if err != nil {
		t.Fatal(err)
	}
	dir := partDir(ref)
	if err := dst.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range l.Segments {
		out, err := dst.Create(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		for off := int64(0); off < f.Size; {
			b, err := src.ReadTransferChunk(ref, f.Name, off, min(chunk, int(f.Size-off)))
			if err != nil || len(b) == 0 {
				t.Fatalf("chunk of %s at %d: %d bytes, %v", f.Name, off, len(b), err)
			}
			if _, err := out.WriteAt(b, off); err != nil {
				t.Fatal(err)
			}
			off += int64(len(b))
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	hwm, err := dst.Create(filepath.Join(dir, hwmFileName))
	if err != nil {
		t.Fatal(err)
	}
	var b [hwmFileBytes]byte
	binary.BigEndian.PutUint64(b[:], uint64(l.HighWatermark))
	if _, err := hwm.WriteAt(b[:], 0); err != nil {
		t.Fatal(err)
	}
	if err := hwm.Close(); err != nil {
		t.Fatal(err)
	}
	return l.HighWatermark
}

// Ensure that a partition copied byte for byte from its transfer listing
// (internals.md §11.3: sealed segments whole, the active one to its last
// visible frame, the exact high watermark) opens elsewhere with every
// committed record at its offset, and takes new commits after them.
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

	// The destination knows the topic's incarnation before it installs.
	dopts := testOptions(dstFS, newFakeClock())
	dst := mustOpen(t, dopts)
	if _, err := dst.Bounds(ref); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	if err := dstFS.RemoveAll(partDir(ref)); err != nil {
		t.Fatal(err)
	}
	if hwm := copyPartition(t, src, dstFS, ref, 777); hwm != int64(len(all)) {
		t.Fatalf("copied boundary %d", hwm)
	}
	dst = mustOpen(t, dopts)
	defer func() { _ = dst.Close() }()
	checkRange(t, dst, ref, 0, all)
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
	for _, name := range []string{"../incarnation", hwmFileName, "consumer.offset", "00000000000000000000.log/../x", ""} {
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

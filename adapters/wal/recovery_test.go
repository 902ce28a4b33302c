package wal

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
)

// frameStarts returns the byte offset of every frame in the file at path.
func frameStarts(t *testing.T, fsys vfs.FS, path string) []int64 {
	t.Helper()
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64
	for off := int64(0); off < int64(len(data)); {
		h, fault := parseFrameHeader(data[off:])
		if fault != faultNone {
			t.Fatalf("frame at %d: %v", off, fault)
		}
		starts = append(starts, off)
		off += h.frameBytes()
	}
	return starts
}

// cleanImage appends n records, closes the WAL and returns its filesystem.
func cleanImage(t *testing.T, n, payloadBytes int, opts Options) *vfs.MemFS {
	t.Helper()
	mem := vfs.NewMem()
	w := openMem(t, mem, opts)
	mustAppendN(t, w, n, payloadBytes)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return mem
}

func fileSize(t *testing.T, fsys vfs.FS, path string) int64 {
	t.Helper()
	st, err := fsys.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// ensure that a tear at every byte offset of the last frame is a torn tail:
// reopen truncates it, keeps every earlier record, and appends land at the
// torn frame's sequence and offset.
func TestTornTailAtEveryOffset(t *testing.T) {
	const n = 5
	mem := cleanImage(t, n, 40, Options{})
	seg := lastSegmentPath(t, mem, testDir)
	starts := frameStarts(t, mem, seg)
	lastStart, size := starts[n-1], fileSize(t, mem, seg)
	for cut := lastStart; cut < size; cut++ {
		img := mem.Crash(vfs.CrashOptions{})
		if err := vfs.Tear(img, seg, cut); err != nil {
			t.Fatal(err)
		}
		w := openMem(t, img, Options{})
		if got := fileSize(t, img, seg); got != lastStart {
			t.Fatalf("cut %d: segment is %d bytes after open, want %d", cut, got, lastStart)
		}
		got := readAll(t, w, 0)
		if len(got) != n-1 {
			t.Fatalf("cut %d: %d records survive, want %d", cut, len(got), n-1)
		}
		if seq, err := w.Append(context.Background(), testRecord(99, 40)); err != nil || seq != n-1 {
			t.Fatalf("cut %d: append after the tear = %d, %v", cut, seq, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// ensure that a bit flip anywhere in a middle frame of the last segment, with
// valid frames after it, fails Open with an error naming the file and the
// damaged frame's offset.
func TestMidFileCorruptionFailsOpen(t *testing.T) {
	mem := cleanImage(t, 5, 40, Options{})
	seg := lastSegmentPath(t, mem, testDir)
	start := frameStarts(t, mem, seg)[2]
	for _, at := range []int64{0, 5, 9, 15, 17, frameHeaderBytes, frameHeaderBytes + 30} {
		img := mem.Crash(vfs.CrashOptions{})
		if err := vfs.FlipBit(img, seg, start+at, 3); err != nil {
			t.Fatal(err)
		}
		_, err := Open(Options{FS: img, Dir: testDir})
		var ce *CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
			t.Fatalf("flip at frame byte %d: Open = %v, want a CorruptionError", at, err)
		}
		if ce.File != seg || ce.Offset != start {
			t.Fatalf("flip at frame byte %d: error names %s at %d, want %s at %d", at, ce.File, ce.Offset, seg, start)
		}
	}
}

// ensure that damage in a sealed segment fails Open even where it would look
// like a torn tail (the segment's last frame).
func TestCorruptionInEarlierSegmentFailsOpen(t *testing.T) {
	opts := Options{SegmentSizeMaxBytes: 300}
	mem := cleanImage(t, 12, 40, opts)
	segs := segmentFiles(t, mem, testDir)
	if len(segs) < 3 {
		t.Fatalf("want several segments, have %v", segs)
	}
	first := filepath.Join(testDir, segs[0])
	starts := frameStarts(t, mem, first)
	if err := vfs.FlipBit(mem, first, starts[len(starts)-1]+frameHeaderBytes+1, 0); err != nil {
		t.Fatal(err)
	}
	_, err := Open(Options{FS: mem, Dir: testDir, SegmentSizeMaxBytes: 300})
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.File != first || ce.Offset != starts[len(starts)-1] {
		t.Fatalf("Open = %v, want a CorruptionError naming %s at %d", err, first, starts[len(starts)-1])
	}
}

// ensure that a zero-filled tail (size reached the disk, data did not) is a
// torn tail, and the next append is readable at the zeroed offsets.
func TestZeroFilledTailIsTorn(t *testing.T) {
	const n = 60
	mem := cleanImage(t, n, 100, Options{})
	seg := lastSegmentPath(t, mem, testDir)
	starts, size := frameStarts(t, mem, seg), fileSize(t, mem, seg)
	zeroFrom := size - 4096
	if err := vfs.Zero(mem, seg, zeroFrom, 4096); err != nil {
		t.Fatal(err)
	}
	kept := 0 // frames ending at or before the zeroed range
	for kept+1 < len(starts) && starts[kept+1] <= zeroFrom {
		kept++
	}
	w := openMem(t, mem, Options{})
	if got := w.DurableNext(); got != uint64(kept) {
		t.Fatalf("DurableNext = %d after zeroing the tail, want %d", got, kept)
	}
	rec := testRecord(1000, 100)
	if seq, err := w.Append(context.Background(), rec); err != nil || seq != uint64(kept) {
		t.Fatalf("append = %d, %v", seq, err)
	}
	if got := readAll(t, w, uint64(kept)); len(got) != 1 || !sameRecord(got[0].Record, rec) {
		t.Fatalf("record appended over the zeroed tail reads back as %+v", got)
	}
}

// ensure that a missing middle segment (a sequence gap) fails Open.
func TestSegmentGapFailsOpen(t *testing.T) {
	opts := Options{SegmentSizeMaxBytes: 300}
	mem := cleanImage(t, 12, 40, opts)
	segs := segmentFiles(t, mem, testDir)
	if err := mem.Remove(filepath.Join(testDir, segs[1])); err != nil {
		t.Fatal(err)
	}
	opts.FS, opts.Dir = mem, testDir
	if _, err := Open(opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open with a missing segment = %v, want ErrCorrupt", err)
	}
}

// ensure that damage to a durable frame after Open is reported by ReadFrom,
// not returned as data.
func TestReadFromReportsCorruption(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{})
	mustAppendN(t, w, 3, 40)
	seg := lastSegmentPath(t, mem, testDir)
	if err := vfs.FlipBit(mem, seg, frameStarts(t, mem, seg)[1]+frameHeaderBytes+4, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.ReadFrom(0, 10); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadFrom over a flipped bit = %v, want ErrCorrupt", err)
	}
}

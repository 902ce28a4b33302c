package wal

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// prepTestLimit is the segment size of the preparation tests on MemFS.
const prepTestLimit = 64 << 10

// framesOf encodes n test records as frames with sequences from base.
func framesOf(base uint64, n, payloadBytes int) ([]byte, []domain.IngressRecord) {
	var b []byte
	recs := make([]domain.IngressRecord, n)
	for i := range recs {
		recs[i] = testRecord(int(base)+i, payloadBytes)
		b = appendFrame(b, base+uint64(i), recs[i], recordSize(recs[i]))
	}
	return b, recs
}

// frameBytesOf is the size of the frames holding recs.
func frameBytesOf(recs []domain.IngressRecord) int64 {
	n := int64(0)
	for _, r := range recs {
		n += int64(frameHeaderBytes + recordSize(r))
	}
	return n
}

// writePreparedSegment lays out a prepared segment based at base: data from
// offset 0, zeros up to limit, the trailer.
func writePreparedSegment(t *testing.T, fsys vfs.FS, base uint64, limit int64, data []byte) string {
	t.Helper()
	if err := fsys.MkdirAll(testDir); err != nil {
		t.Fatal(err)
	}
	path := segmentPath(testDir, base)
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(prepTrailer(limit), limit); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFileBytes(t *testing.T, fsys vfs.FS, path string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// checkPreparedFile fails unless b is limit zero bytes (after a data prefix
// of dataEnd bytes) and the trailer naming limit.
func checkPreparedFile(t *testing.T, b []byte, dataEnd, limit int64) {
	t.Helper()
	if int64(len(b)) != limit+prepTrailerBytes {
		t.Fatalf("prepared file is %d bytes, want %d", len(b), limit+prepTrailerBytes)
	}
	if !bytes.Equal(b[limit:], prepTrailer(limit)) {
		t.Fatalf("trailer %q, want %q", b[limit:], prepTrailer(limit))
	}
	if n := bytes.IndexFunc(b[dataEnd:limit], func(r rune) bool { return r != 0 }); n >= 0 {
		t.Fatalf("non-zero byte at %d of the prepared area [%d,%d)", dataEnd+int64(n), dataEnd, limit)
	}
}

func prepExists(fsys vfs.FS) bool {
	_, err := fsys.Stat(filepath.Join(testDir, prepFileName))
	return err == nil
}

// ensure that no spare is made before the active segment is half full, that
// one is made after, and that it is zeros ending in the NWPREP01 trailer.
func TestPrepFileCreatedAfterHalfFull(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{SegmentSizeMaxBytes: prepTestLimit, Prealloc: true})
	rec := testRecord(1, 1000)
	frame := int64(frameHeaderBytes + recordSize(rec))
	for range prepTestLimit/2/frame - 1 {
		if _, err := w.Append(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	if prepExists(mem) {
		t.Fatal("spare made before the segment was half full")
	}
	mustAppendN(t, w, 2, 1000)
	pollUntil(t, "spare prepared", func() bool { return w.prep.made.Load() == 1 })
	checkPreparedFile(t, readFileBytes(t, mem, filepath.Join(testDir, prepFileName)), 0, prepTestLimit)
}

// ensure that the roll renames the spare into place (directory fsync before
// the first write), trims the sealed segment to its data, and that appends
// after it land at offset 0 of the prepared file and survive a reopen.
func TestRollInstallsPreparedSegment(t *testing.T) {
	mem := vfs.NewMem()
	log := &opLog{}
	opts := Options{SegmentSizeMaxBytes: prepTestLimit, Prealloc: true}
	w := openMem(t, vfs.Inject(mem, log.hook), opts)
	first := mustAppendN(t, w, 40, 1000) // past half of the first segment
	pollUntil(t, "spare prepared", func() bool { return w.prep.made.Load() == 1 })
	rest := appendUntilRoll(t, w, mem, 40)
	segs := segmentFiles(t, mem, testDir)
	if len(segs) != 2 {
		t.Fatalf("segments %v, want 2", segs)
	}
	sealed := readFileBytes(t, mem, filepath.Join(testDir, segs[0]))
	if res, err := scanSegment(bytes.NewReader(sealed), int64(len(sealed)), segs[0], 0, false); err != nil || res.validEnd != int64(len(sealed)) {
		t.Fatalf("sealed segment not trimmed to its frames: %+v, %v (size %d)", res, err, len(sealed))
	}
	active := filepath.Join(testDir, segs[1])
	b := readFileBytes(t, mem, active)
	h, fault := parseFrameHeader(b)
	if fault != faultNone || h.seq != uint64(len(first)+len(rest)-1) {
		t.Fatalf("offset 0 of the new segment: %v seq %d, want the roll's frame", fault, h.seq)
	}
	checkPreparedFile(t, b, h.frameBytes(), prepTestLimit)
	checkRenameSyncedBeforeWrite(t, log.snapshot(), active)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if prepExists(mem) {
		t.Fatal("Close left the spare behind")
	}
	w2 := openMem(t, mem, opts)
	checkRecords(t, readAll(t, w2, 0), 0, append(first, rest...))
}

// appendUntilRoll appends records (numbered from i0) until a second segment
// exists and returns them.
func appendUntilRoll(t *testing.T, w *WAL, fsys vfs.FS, i0 int) []domain.IngressRecord {
	t.Helper()
	var recs []domain.IngressRecord
	for i := i0; len(segmentFiles(t, fsys, testDir)) < 2; i++ {
		rec := testRecord(i, 1000)
		if _, err := w.Append(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func checkRenameSyncedBeforeWrite(t *testing.T, ops []loggedOp, active string) {
	t.Helper()
	renamed, synced := false, false
	for _, o := range ops {
		switch {
		case o.op == vfs.OpRename && filepath.Base(o.name) == prepFileName:
			renamed = true
		case o.op == vfs.OpSyncDir && renamed:
			synced = true
		case o.op == vfs.OpWrite && o.name == active:
			if !renamed || !synced {
				t.Fatalf("write to %s before the spare's rename (%v) and directory fsync (%v)", active, renamed, synced)
			}
			return
		}
	}
	t.Fatalf("no write to %s", active)
}

// ensure that replay of a prepared active segment holding N frames finds
// exactly N (the zeros after them are its data end, not a torn tail), keeps
// the file prepared and appends after them.
func TestReplayPreparedActiveSegment(t *testing.T) {
	for _, n := range []int{0, 1, 7} {
		mem := vfs.NewMem()
		data, recs := framesOf(0, n, 300)
		path := writePreparedSegment(t, mem, 0, prepTestLimit, data)
		w := openMem(t, mem, Options{SegmentSizeMaxBytes: prepTestLimit})
		if w.DurableNext() != uint64(n) {
			t.Fatalf("n=%d: DurableNext %d", n, w.DurableNext())
		}
		more := mustAppendN(t, w, 2, 300)
		checkRecords(t, readAll(t, w, 0), 0, append(recs, more...))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		checkPreparedFile(t, readFileBytes(t, mem, path), int64(len(data))+frameBytesOf(more), prepTestLimit)
	}
}

// ensure that a leftover spare is never replayed as a segment and is removed
// at open.
func TestLeftoverPrepFileRemovedAtOpen(t *testing.T) {
	mem := vfs.NewMem()
	w := openMem(t, mem, Options{})
	recs := mustAppendN(t, w, 3, 100)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	spare, _ := framesOf(3, 2, 100) // valid-looking frames must not be taken
	f, err := mem.Create(filepath.Join(testDir, prepFileName))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteAt(spare, 0)
	_ = f.Close()
	w2 := openMem(t, mem, Options{})
	checkRecords(t, readAll(t, w2, 0), 0, recs)
	if prepExists(mem) {
		t.Fatal("leftover spare not removed")
	}
}

// ensure that with the option off nothing is prepared: no spare, and the
// segments are exactly their frames.
func TestNoPreparationWhenOff(t *testing.T) {
	mem := vfs.NewMem()
	log := &opLog{}
	w := openMem(t, vfs.Inject(mem, log.hook), Options{SegmentSizeMaxBytes: prepTestLimit})
	recs := mustAppendN(t, w, 40, 1000)
	recs = append(recs, appendUntilRoll(t, w, mem, 40)...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, o := range log.snapshot() {
		if filepath.Base(o.name) == prepFileName {
			t.Fatalf("option off, yet %v on %s", o.op, o.name)
		}
	}
	total := int64(0)
	for _, s := range segmentFiles(t, mem, testDir) {
		total += int64(len(readFileBytes(t, mem, filepath.Join(testDir, s))))
	}
	if want := frameBytesOf(recs); total != want {
		t.Fatalf("segments hold %d bytes, want exactly the %d bytes of frames", total, want)
	}
}

// ensure that a torn run inside a prepared last segment (a bad frame, then
// valid frames within 16 MiB) is cut at the bad frame: the data ends there,
// the rest is zeroed and the file stays prepared.
func TestPreparedTornRunWithinWindowIsCut(t *testing.T) {
	mem := vfs.NewMem()
	good, recs := framesOf(0, 3, 200)
	tornRun, _ := framesOf(3, 4, 200)
	tornRun[frameHeaderBytes+5] ^= 0xFF // frame 3's payload did not land
	path := writePreparedSegment(t, mem, 0, prepTestLimit, append(bytes.Clone(good), tornRun...))
	w := openMem(t, mem, Options{SegmentSizeMaxBytes: prepTestLimit})
	if w.DurableNext() != 3 {
		t.Fatalf("DurableNext %d, want 3 (cut at the bad frame)", w.DurableNext())
	}
	checkRecords(t, readAll(t, w, 0), 0, recs)
	checkPreparedFile(t, readFileBytes(t, mem, path), int64(len(good)), prepTestLimit)
}

// ensure that damage in a prepared segment followed by a valid frame more
// than 16 MiB away, or in a segment without the trailer, still fails open.
func TestPreparedTornRunBeyondWindowOrWithoutTrailerFails(t *testing.T) {
	good, _ := framesOf(0, 3, 200)
	later, _ := framesOf(5, 1, 200)
	bad := []byte("garbage!")
	t.Run("beyond window", func(t *testing.T) {
		mem := vfs.NewMem()
		limit := int64(preparedTornWindowBytes + 1<<20)
		data := append(append(bytes.Clone(good), bad...), make([]byte, preparedTornWindowBytes)...)
		data = append(data, later...)
		writePreparedSegment(t, mem, 0, limit, data)
		checkOpenCorrupt(t, mem, int64(len(good)))
	})
	t.Run("no trailer", func(t *testing.T) {
		mem := vfs.NewMem()
		data := append(append(append(bytes.Clone(good), bad...), make([]byte, 100)...), later...)
		path := writePreparedSegment(t, mem, 0, prepTestLimit, data)
		if err := vfs.Tear(mem, path, prepTestLimit); err != nil {
			t.Fatal(err)
		}
		checkOpenCorrupt(t, mem, int64(len(good)))
	})
	t.Run("not the last segment", func(t *testing.T) {
		mem := vfs.NewMem()
		data := append(append(bytes.Clone(good), bad...), later...)
		writePreparedSegment(t, mem, 0, prepTestLimit, data)
		writePreparedSegment(t, mem, 3, prepTestLimit, nil)
		checkOpenCorrupt(t, mem, int64(len(good)))
	})
}

func checkOpenCorrupt(t *testing.T, fsys vfs.FS, off int64) {
	t.Helper()
	w, err := Open(Options{FS: fsys, Dir: testDir, SegmentSizeMaxBytes: prepTestLimit})
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Offset != off {
		if w != nil {
			_ = w.Close()
		}
		t.Fatalf("Open: %v, want a corruption at byte %d", err, off)
	}
}

// ensure that a group commit above 16 MiB into a prepared segment is written
// and fsynced in runs of whole frames of at most 16 MiB.
func TestPreparedGroupCommitWrittenInRuns(t *testing.T) {
	mem := vfs.NewMem()
	path := writePreparedSegment(t, mem, 0, segmentSizeMaxBytes, nil)
	var sizes []int
	counting := &sizeFS{FS: mem, path: path, sizes: &sizes}
	w := openMem(t, counting, Options{})
	recs := make([]domain.IngressRecord, 40)
	for i := range recs {
		recs[i] = domain.IngressRecord{Topic: "t", Partition: int32(i), Payload: bytes.Repeat([]byte{byte(i)}, 1<<20)}
	}
	if _, err := w.AppendMany(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	frame := frameHeaderBytes + recordSize(recs[0])
	perRun := preparedRunMaxBytes / frame
	want := []int{perRun * frame, perRun * frame, (len(recs) - 2*perRun) * frame}
	if len(sizes) != len(want) || sizes[0] != want[0] || sizes[1] != want[1] || sizes[2] != want[2] {
		t.Fatalf("writes of %v bytes, want runs %v", sizes, want)
	}
	if syncs := counting.syncs; syncs != len(want) {
		t.Fatalf("%d fsyncs, want one per run (%d)", syncs, len(want))
	}
	got, err := w.ReadFrom(0, len(recs))
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, 0, recs)
}

// sizeFS records the size of every write to one file and counts its syncs.
type sizeFS struct {
	vfs.FS
	path  string
	sizes *[]int
	syncs int
}

func (s *sizeFS) OpenRW(name string) (vfs.File, error) {
	f, err := s.FS.OpenRW(name)
	if err != nil || name != s.path {
		return f, err
	}
	return &sizeFile{File: f, fs: s}, nil
}

type sizeFile struct {
	vfs.File
	fs *sizeFS
}

func (f *sizeFile) WriteAt(p []byte, off int64) (int, error) {
	*f.fs.sizes = append(*f.fs.sizes, len(p))
	return f.File.WriteAt(p, off)
}

func (f *sizeFile) Sync() error {
	f.fs.syncs++
	return f.File.Sync()
}

// ensure that a prepared segment whose limit is below the configured segment
// size (made with another setting) turns ordinary before a write would reach
// its trailer, and keeps every record.
func TestPreparedSegmentBelowSegmentSizeTurnsOrdinary(t *testing.T) {
	mem := vfs.NewMem()
	path := writePreparedSegment(t, mem, 0, 4096, nil)
	w := openMem(t, mem, Options{SegmentSizeMaxBytes: prepTestLimit})
	recs := mustAppendN(t, w, 20, 500)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := readFileBytes(t, mem, path)
	if want := frameBytesOf(recs); int64(len(b)) != want {
		t.Fatalf("segment is %d bytes, want its %d bytes of frames", len(b), want)
	}
	w2 := openMem(t, mem, Options{SegmentSizeMaxBytes: prepTestLimit})
	checkRecords(t, readAll(t, w2, 0), 0, recs)
}

// ensure that a failed preparation leaves no spare and the roll creates an
// empty segment as before, without latching the WAL.
func TestFailedPreparationFallsBackToCreate(t *testing.T) {
	mem := vfs.NewMem()
	faults := &vfs.Faults{}
	faults.FailNext(vfs.OpSync, prepFileName)
	w := openMem(t, vfs.Inject(mem, faults.Hook), Options{SegmentSizeMaxBytes: prepTestLimit, Prealloc: true})
	recs := mustAppendN(t, w, 40, 1000)
	pollUntil(t, "preparation failed", func() bool { return faults.Fired() == 1 && !prepExists(mem) })
	recs = append(recs, appendUntilRoll(t, w, mem, 40)...)
	segs := segmentFiles(t, mem, testDir)
	if b := readFileBytes(t, mem, filepath.Join(testDir, segs[1])); int64(len(b)) == prepTestLimit+prepTrailerBytes {
		t.Fatal("roll used a spare whose preparation failed")
	}
	if w.Failed() {
		t.Fatal("a failed preparation latched the WAL")
	}
	checkRecords(t, readAll(t, w, 0), 0, recs)
}

// ensure that a valid frame starting exactly 16 MiB after a bad frame in a
// prepared last segment fails Open: a torn run is whole frames of at most
// 16 MiB, so its frames all start before that point, and a frame there is
// a later run that was synced and acknowledged (spec 2.7).
func TestPreparedFrameAtTheWindowEdgeFailsOpen(t *testing.T) {
	good, _ := framesOf(0, 3, 200)
	later, _ := framesOf(5, 1, 200)
	mem := vfs.NewMem()
	limit := int64(preparedTornWindowBytes + 1<<20)
	data := append(bytes.Clone(good), []byte("garbage!")...)
	data = append(data, make([]byte, preparedTornWindowBytes-8)...)
	data = append(data, later...) // starts at len(good) + 16 MiB
	writePreparedSegment(t, mem, 0, limit, data)
	w, err := Open(Options{FS: mem, Dir: testDir, SegmentSizeMaxBytes: limit})
	if err == nil {
		defer w.Close()
		t.Fatalf("Open accepted a valid frame exactly 16 MiB after the bad frame (DurableNext %d)", w.DurableNext())
	}
}

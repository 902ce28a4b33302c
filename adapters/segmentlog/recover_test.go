package segmentlog

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// crashReopen abandons s (its goroutines stopped, its files untouched by a
// close on the crashed copy) and opens a store on what a machine crash
// leaves of mem.
func crashReopen(t *testing.T, s *Store, mem *vfs.MemFS, rnd *rand.Rand, opts Options) (*Store, *vfs.MemFS) {
	t.Helper()
	crashed := mem.Crash(vfs.CrashOptions{Rand: rnd})
	_ = s.Close() // closes against the pre-crash filesystem only
	opts.FS = crashed
	return mustOpen(t, opts), crashed
}

// ensure that records acknowledged by a commit are visible after a crash
// with no further commit, on the first open and after a clean restart
// (F19: the boundary is never written on the commit path).
func TestCrashAfterCommitKeepsRecordsVisible(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	s := mustOpen(t, opts)
	ref := testRef(0)
	a := batch(1, 6)
	mustCommit(t, s, ref, a)
	s, mem = crashReopen(t, s, mem, nil, opts)
	checkExactly(t, s, ref, a)

	if err := s.Close(); err != nil { // a clean close writes the exact boundary
		t.Fatal(err)
	}
	opts.FS = mem
	s = mustOpen(t, opts)
	b := batch(2, 3)
	mustCommit(t, s, ref, b) // the first advance after this open empties the hwm file
	s, _ = crashReopen(t, s, mem, nil, opts)
	defer func() { _ = s.Close() }()
	checkExactly(t, s, ref, append(a, b...))
}

// ensure that a last frame whose bytes are present but zeroed (the final
// sector never reached the disk) is cut as a torn tail, so the next commit
// is readable at those offsets (F33).
func TestZeroedFinalSectorIsATornTail(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	s := mustOpen(t, opts)
	ref := testRef(0)
	var all []domain.Record
	for i := range 120 {
		recs := batch(i, 3)
		mustCommit(t, s, ref, recs)
		all = append(all, recs...)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := mem.Stat(segPath(ref, 0))
	if err != nil || st.Size() < 8192 {
		t.Fatalf("segment too small for the test: %v, %v", st, err)
	}
	if err := vfs.Zero(mem, segPath(ref, 0), st.Size()-4096, 4096); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	hwm := hwmBounds(t, s, ref)
	if hwm >= int64(len(all)) || hwm == 0 {
		t.Fatalf("high watermark %d after zeroing the last 4 KiB of %d records", hwm, len(all))
	}
	checkRange(t, s, ref, 0, all[:hwm])
	next := batch(100, 4)
	if first := mustCommit(t, s, ref, next); first != hwm {
		t.Fatalf("commit at %d, want %d", first, hwm)
	}
	checkExactly(t, s, ref, append(all[:hwm:hwm], next...))
}

// frameStarts returns the position of every frame in a segment.
func frameStarts(t *testing.T, fsys vfs.FS, path string) []int64 {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scan, err := scanSegment(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(scan.frames))
	for i, fr := range scan.frames {
		out[i] = fr.pos
	}
	return out
}

// ensure that a flipped bit in a middle frame (payload or header, in the
// active or a sealed segment) leaves its neighbours readable, its offsets
// answering ErrRecordCorrupt or ErrOffsetGone and never served, and that
// recovery does not truncate valid frames after it (F15, 4.7).
func TestBitFlipInMiddleFrame(t *testing.T) {
	cases := []struct {
		name   string
		segMax int64
		at     int64 // byte of the frame to flip
	}{
		{"active_payload", 0, frameHeaderBytes + 5},
		{"active_header_count", 0, frameCountOff + 3},
		{"sealed_payload", 2000, frameHeaderBytes + 5},
		{"sealed_header_size", 2000, frameStoredSizeOff + 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mem := vfs.NewMem()
			opts := testOptions(mem, newFakeClock())
			opts.SegmentMaxBytes = c.segMax
			s := mustOpen(t, opts)
			ref := testRef(0)
			var all []domain.Record
			for i := range 24 {
				recs := batch(i, 3)
				mustCommit(t, s, ref, recs)
				all = append(all, recs...)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := segPath(ref, 0)
			starts := frameStarts(t, mem, path)
			victim := len(starts) / 2
			sizeBefore, _ := mem.Stat(path)
			if err := vfs.FlipBit(mem, path, starts[victim]+c.at, 3); err != nil {
				t.Fatal(err)
			}
			s = mustOpen(t, opts)
			defer func() { _ = s.Close() }()
			if st, _ := mem.Stat(path); st.Size() != sizeBefore.Size() {
				t.Fatalf("recovery cut the segment from %d to %d bytes", sizeBefore.Size(), st.Size())
			}
			bad := map[int64]bool{}
			for off := int64(victim * 3); off < int64(victim*3+3); off++ {
				bad[off] = true
			}
			checkEachOffset(t, s, ref, all, bad)
		})
	}
}

// checkEachOffset reads every offset alone: those in bad must fail as
// corrupt or gone, the rest must read back as want.
func checkEachOffset(t *testing.T, s *Store, ref domain.PartitionRef, want []domain.Record, bad map[int64]bool) {
	t.Helper()
	for off := range int64(len(want)) {
		got, err := s.Read(context.Background(), ref, off, 1, 0)
		if bad[off] {
			if !errors.Is(err, domain.ErrRecordCorrupt) && !errors.Is(err, domain.ErrOffsetGone) {
				t.Fatalf("damaged offset %d: %d records, error %v; want corrupt or gone", off, len(got), err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("intact offset %d: %v", off, err)
		}
		checkRange(t, s, ref, off, want[off:off+1])
	}
	// A read running into the damage stops before it.
	for off := range int64(len(want)) {
		got, err := s.Read(context.Background(), ref, off, len(want), 0)
		for i, r := range got {
			if bad[r.Offset] || r.Offset != off+int64(i) {
				t.Fatalf("read from %d served offset %d (damaged or out of order)", off, r.Offset)
			}
		}
		if err == nil && len(got) == 0 {
			t.Fatalf("read from %d returned nothing and no error", off)
		}
	}
}

// ensure that a segment torn at any byte recovers to a frame boundary: every
// record below the recovered high watermark is intact, nothing above it is
// served, and the next commit lands there.
func TestTornTailAtRandomBytes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 11))
	for round := range 12 {
		mem := vfs.NewMem()
		opts := testOptions(mem, newFakeClock())
		s := mustOpen(t, opts)
		ref := testRef(0)
		var all []domain.Record
		for i := range 1 + rnd.IntN(10) {
			recs := batch(round*100+i, 1+rnd.IntN(4))
			mustCommit(t, s, ref, recs)
			all = append(all, recs...)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		st, _ := mem.Stat(segPath(ref, 0))
		cut := rnd.Int64N(st.Size())
		if err := vfs.Tear(mem, segPath(ref, 0), cut); err != nil {
			t.Fatal(err)
		}
		s = mustOpen(t, opts)
		hwm := hwmBounds(t, s, ref)
		if hwm > int64(len(all)) {
			t.Fatalf("round %d: high watermark %d grew past the %d records written", round, hwm, len(all))
		}
		if hwm > 0 {
			checkRange(t, s, ref, 0, all[:hwm])
		}
		if after, _ := mem.Stat(segPath(ref, 0)); len(frameStarts(t, mem, segPath(ref, 0))) > 0 &&
			after.Size() > cut {
			t.Fatalf("round %d: segment of %d bytes after a cut at %d", round, after.Size(), cut)
		}
		next := batch(round*100+99, 2)
		if first := mustCommit(t, s, ref, next); first != hwm {
			t.Fatalf("round %d: commit at %d, want %d", round, first, hwm)
		}
		checkExactly(t, s, ref, append(all[:hwm:hwm], next...))
		_ = s.Close()
	}
}

// ensure that under a lying fsync (on a segment or on the hwm file) a crash
// never makes the store serve a torn or fabricated record, never stops it
// from opening, and never leaves a high watermark past what was written;
// records committed before the lie are readable at the latest after the next
// commit advances over them (4.6 "Lying fsync").
func TestLyingFsyncNeverServesFabricatedRecords(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 5))
	for round := range 40 {
		mem := vfs.NewMem()
		faults := &vfs.Faults{}
		opts := testOptions(vfs.Inject(mem, faults.Hook), newFakeClock())
		opts.SegmentMaxBytes = int64(1000 + rnd.IntN(3000))
		s := mustOpen(t, opts)
		ref := testRef(0)
		var all []domain.Record
		commits, lieAt, honest := 4+rnd.IntN(8), rnd.IntN(8), 0
		for i := range commits {
			if i == lieAt {
				target := ".log"
				if rnd.IntN(3) == 0 {
					target = hwmFileName
				}
				faults.LieNext(vfs.OpSync, target)
			}
			if rnd.IntN(4) == 0 {
				s = (&faultRig{opts: opts}).reopen(t, s)
			}
			recs := batch(round*100+i, 1+rnd.IntN(5))
			mustCommit(t, s, ref, recs)
			if faults.Fired() == 0 {
				honest = len(all) + len(recs)
			}
			all = append(all, recs...)
		}
		s, _ = crashReopen(t, s, mem, rnd, opts)
		hwm := hwmBounds(t, s, ref)
		if hwm > int64(len(all)) {
			t.Fatalf("round %d: high watermark %d past the %d records ever written", round, hwm, len(all))
		}
		checkServedMatch(t, s, ref, all, 0, hwm)
		more := batch(round*100+99, 2)
		first := mustCommit(t, s, ref, more)
		if first < int64(honest) || first > int64(len(all)) {
			t.Fatalf("round %d: next commit at %d, want within [%d, %d]", round, first, honest, len(all))
		}
		if honest > 0 {
			checkRange(t, s, ref, 0, all[:honest])
		}
		checkServedMatch(t, s, ref, all, int64(honest), first)
		checkRange(t, s, ref, first, more)
		_ = s.Close()
	}
}

// checkServedMatch reads each offset in [from, to) alone: a record served
// must be the one committed there; an error is allowed (lost to a lie).
func checkServedMatch(t *testing.T, s *Store, ref domain.PartitionRef, all []domain.Record, from, to int64) {
	t.Helper()
	for off := from; off < to; off++ {
		if _, err := s.Read(context.Background(), ref, off, 1, 0); err == nil {
			checkRange(t, s, ref, off, all[off:off+1])
		}
	}
}

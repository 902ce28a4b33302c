package receivelog

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
)

// ensure that records of every kind, edge values included, load back in
// append order from the same store and from a new one (a restart), and that
// Size is the file's length.
func TestRoundTripEveryKind(t *testing.T) {
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 3)
	makePartition(t, mem, ref)
	s := newStore(t, mem)
	if got := mustLoad(t, s, ref); len(got) != 0 || s.Size(ref) != 0 {
		t.Fatalf("a partition with no file: %v, size %d", got, s.Size(ref))
	}
	first, second := everyKind(), []deadletter.Record{count(9, 2), reason(9, "again")}
	must(t, s.Append(ref, first))
	must(t, s.Append(ref, second))
	must(t, s.Append(ref, nil)) // nothing to write
	want := concat(first, second)
	wantRecords(t, "same store", mustLoad(t, s, ref), want)
	if size := fileSize(t, mem, receivesPath(ref)); s.Size(ref) != size || size != int64(len(encodeFrames(nil, want))) {
		t.Fatalf("Size %d, file %d bytes", s.Size(ref), size)
	}
	restarted := newStore(t, mem)
	if restarted.Size(ref) != 0 {
		t.Fatalf("Size before any read: %d", restarted.Size(ref))
	}
	wantRecords(t, "after a restart", mustLoad(t, restarted, ref), want)
	if restarted.Size(ref) != s.Size(ref) {
		t.Fatalf("Size after Load %d, want %d", restarted.Size(ref), s.Size(ref))
	}
}

// ensure that a torn tail (a frame cut short) and a damaged frame (a CRC
// byte flipped) end what Load answers, and that the next Append lands at
// the end of the good prefix, so later frames of the damaged file never
// reappear after it.
func TestTornTailIsOverwritten(t *testing.T) {
	a := []deadletter.Record{count(1, 1), reason(1, "boom"), count(2, 1)}
	b := []deadletter.Record{intent(1, 3), count(3, 1)}
	c := []deadletter.Record{count(4, 1), reason(4, "later")}
	frameAt := func(recs []deadletter.Record, i int) int64 { return int64(len(encodeFrames(nil, recs[:i]))) }
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, fsys vfs.FS, name string)
		good   []deadletter.Record
	}{
		{"cut mid-frame", func(t *testing.T, fsys vfs.FS, name string) {
			must(t, vfs.Tear(fsys, name, fileSize(t, fsys, name)-3))
		}, concat(a, b[:1])},
		{"cut mid-header", func(t *testing.T, fsys vfs.FS, name string) {
			must(t, vfs.Tear(fsys, name, frameAt(concat(a, b), 4)+5))
		}, concat(a, b[:1])},
		{"crc flipped", func(t *testing.T, fsys vfs.FS, name string) {
			must(t, vfs.FlipBit(fsys, name, frameAt(concat(a, b), 2)+frameLenBytes+1, 3))
		}, a[:2]},
		{"body flipped", func(t *testing.T, fsys vfs.FS, name string) {
			must(t, vfs.FlipBit(fsys, name, frameAt(concat(a, b), 1)+frameHeaderBytes, 0))
		}, a[:1]},
		{"length zeroed", func(t *testing.T, fsys vfs.FS, name string) {
			must(t, vfs.Zero(fsys, name, frameAt(concat(a, b), 3), frameLenBytes))
		}, a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := vfs.NewMem()
			ref := refOf("orders", idA, 0)
			makePartition(t, mem, ref)
			s := newStore(t, mem)
			must(t, s.Append(ref, a))
			must(t, s.Append(ref, b))
			must(t, s.Close())
			tc.damage(t, mem, receivesPath(ref))

			s = newStore(t, mem)
			wantRecords(t, "after damage", mustLoad(t, s, ref), tc.good)
			must(t, s.Append(ref, c))
			want := concat(tc.good, c)
			wantRecords(t, "after the next Append", mustLoad(t, s, ref), want)
			if size := fileSize(t, mem, receivesPath(ref)); size != int64(len(encodeFrames(nil, want))) || s.Size(ref) != size {
				t.Fatalf("file %d bytes, Size %d, want %d: the damaged tail was not cut", size, s.Size(ref), len(encodeFrames(nil, want)))
			}
			wantRecords(t, "after a restart", mustLoad(t, newStore(t, mem), ref), want)
		})
	}
}

// ensure that Compact replaces the contents with exactly live, that the
// held descriptor follows the new file (the next Append lands in it), that
// a leftover .tmp is ignored by Load and removed by the next priming, and
// that a restart loads exactly what was compacted and appended.
func TestCompactReplacesTheFile(t *testing.T) {
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 1)
	makePartition(t, mem, ref)
	s := newStore(t, mem)
	must(t, s.Append(ref, everyKind()))
	must(t, s.Append(ref, []deadletter.Record{count(50, 1), count(51, 1)}))
	live := []deadletter.Record{count(51, 1), reason(51, "kept")}
	must(t, s.Compact(ref, live))
	wantRecords(t, "after Compact", mustLoad(t, s, ref), live)
	if s.Size(ref) != int64(len(encodeFrames(nil, live))) {
		t.Fatalf("Size after Compact %d", s.Size(ref))
	}
	more := []deadletter.Record{intent(51, 4)}
	must(t, s.Append(ref, more))
	want := concat(live, more)
	wantRecords(t, "after Compact and Append", mustLoad(t, s, ref), want)
	wantAbsent(t, mem, filepath.Join(partDir(ref), tmpFileName))

	// A compaction that died before its rename leaves a .tmp behind.
	tmp := filepath.Join(partDir(ref), tmpFileName)
	must(t, vfs.WriteFileAtomic(mem, tmp, encodeFrames(nil, []deadletter.Record{count(99, 9)})))
	s = newStore(t, mem)
	wantRecords(t, "with a leftover .tmp", mustLoad(t, s, ref), want)
	must(t, s.Append(ref, []deadletter.Record{count(52, 1)}))
	wantAbsent(t, mem, tmp)
	want = append(want, count(52, 1))
	wantRecords(t, "after a restart", mustLoad(t, newStore(t, mem), ref), want)

	// Compacting to nothing, from a store that never primed the partition.
	s = newStore(t, mem)
	must(t, s.Compact(ref, nil))
	if got := mustLoad(t, s, ref); len(got) != 0 || s.Size(ref) != 0 || fileSize(t, mem, receivesPath(ref)) != 0 {
		t.Fatalf("after an empty Compact: %v, Size %d", got, s.Size(ref))
	}
	must(t, s.Append(ref, more))
	wantRecords(t, "after an empty Compact and Append", mustLoad(t, newStore(t, mem), ref), more)
}

// ensure that a partition whose directory is missing, or whose topic's
// marker names another incarnation, is stranded: Append and Compact answer
// domain.ErrLogClosed and create nothing, Load answers no records, and the
// partition stays stranded until Forget even once its directory is right.
func TestStrandedPartition(t *testing.T) {
	recs := []deadletter.Record{count(1, 1)}
	t.Run("missing directory", func(t *testing.T) {
		mem := vfs.NewMem()
		ref := refOf("orders", idA, 2)
		makePartition(t, mem, refOf("orders", idA, 0)) // the topic, not this partition
		s := newStore(t, mem)
		wantErr(t, s.Append(ref, recs), domain.ErrLogClosed, "Append")
		wantErr(t, s.Compact(ref, recs), domain.ErrLogClosed, "Compact")
		wantAbsent(t, mem, partDir(ref))
		if got := mustLoad(t, s, ref); len(got) != 0 {
			t.Fatalf("Load of a missing directory: %v", got)
		}
		none := refOf("absent", idA, 0)
		wantErr(t, s.Append(none, recs), domain.ErrLogClosed, "Append to a missing topic")
		wantAbsent(t, mem, filepath.Join(dataDir, topicsDirName, "absent"))

		makePartition(t, mem, ref)
		wantErr(t, s.Append(ref, recs), domain.ErrLogClosed, "Append before Forget")
		wantAbsent(t, mem, receivesPath(ref))
		s.Forget(ref)
		must(t, s.Append(ref, recs))
		wantRecords(t, "after Forget", mustLoad(t, s, ref), recs)
	})
	t.Run("other incarnation", func(t *testing.T) {
		mem := vfs.NewMem()
		old := refOf("orders", idA, 0)
		makePartition(t, mem, old)
		s := newStore(t, mem)
		ref := refOf("orders", idB, 0)
		wantErr(t, s.Append(ref, recs), domain.ErrLogClosed, "Append")
		wantErr(t, s.Compact(ref, recs), domain.ErrLogClosed, "Compact")
		wantAbsent(t, mem, receivesPath(ref))
		wantAbsent(t, mem, filepath.Join(partDir(ref), tmpFileName))
		if got := mustLoad(t, s, ref); len(got) != 0 {
			t.Fatalf("Load of another incarnation: %v", got)
		}

		// The topic is recreated as incarnation B.
		must(t, vfs.WriteFileAtomic(mem, filepath.Join(dataDir, topicsDirName, "orders", markerFileName), []byte(idB)))
		wantErr(t, s.Compact(ref, recs), domain.ErrLogClosed, "Compact before Forget")
		s.Forget(ref)
		must(t, s.Compact(ref, recs))
		wantRecords(t, "after Forget", mustLoad(t, s, ref), recs)
	})
}

// ensure that a batch holding a record no Table could make is refused with
// domain.ErrInvalidArgument and writes nothing, whether or not the file
// exists yet.
func TestInvalidRecordsAreRefused(t *testing.T) {
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 0)
	makePartition(t, mem, ref)
	s := newStore(t, mem)
	bad := []deadletter.Record{
		{Kind: 0, Offset: 1, Count: 1},
		{Kind: 4, Offset: 1, Count: 1},
		count(-1, 1),
		count(1, 0),
		intent(1, 0),
		{Kind: deadletter.KindCount, Offset: 1, Count: 1, Reason: "x"},
		{Kind: deadletter.KindReason, Offset: 1, Count: 1},
		reason(1, strings.Repeat("x", deadletter.ReasonBytesMax+1)),
	}
	for _, r := range bad {
		wantErr(t, s.Append(ref, []deadletter.Record{count(1, 1), r}), domain.ErrInvalidArgument, "Append")
	}
	wantAbsent(t, mem, receivesPath(ref))
	good := []deadletter.Record{count(1, 1)}
	must(t, s.Append(ref, good))
	size := fileSize(t, mem, receivesPath(ref))
	for _, r := range bad {
		wantErr(t, s.Append(ref, []deadletter.Record{r}), domain.ErrInvalidArgument, "Append")
		wantErr(t, s.Compact(ref, []deadletter.Record{count(2, 1), r}), domain.ErrInvalidArgument, "Compact")
	}
	if fileSize(t, mem, receivesPath(ref)) != size {
		t.Fatal("a refused batch changed the file")
	}
	wantAbsent(t, mem, filepath.Join(partDir(ref), tmpFileName))
	wantRecords(t, "after refusals", mustLoad(t, newStore(t, mem), ref), good)
}

// ensure that a failed Append leaves nothing the next one can be read
// after: the next Append cuts the file back to the good end first.
func TestFailedAppendIsCutBeforeTheNext(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		mem := vfs.NewMem()
		faults := &vfs.Faults{}
		ref := refOf("orders", idA, 0)
		makePartition(t, mem, ref)
		s := newStore(t, vfs.Inject(mem, faults.Hook))
		first := []deadletter.Record{count(1, 1)}
		must(t, s.Append(ref, first))
		faults.FailNext(op, receivesFileName)
		if err := s.Append(ref, []deadletter.Record{count(2, 1), count(3, 1)}); err == nil {
			t.Fatalf("op %d: the injected failure was not reported", op)
		}
		wantRecords(t, "after the failure", mustLoad(t, s, ref), first)
		// The next record is as long as the failed first one: without the
		// cut, the failed second record would follow it.
		next := []deadletter.Record{count(4, 1)}
		must(t, s.Append(ref, next))
		want := concat(first, next)
		wantRecords(t, "same store", mustLoad(t, s, ref), want)
		wantRecords(t, "after a restart", mustLoad(t, newStore(t, mem), ref), want)
	}
}

// ensure that over the descriptor cap the least recently used partition's
// descriptor is closed and reopened on its next Append, losing nothing.
func TestDescriptorCap(t *testing.T) {
	mem := vfs.NewMem()
	s, err := New(Options{FS: mem, DataDir: dataDir, MaxHeld: 2})
	must(t, err)
	defer s.Close()
	refs := []domain.PartitionRef{refOf("orders", idA, 0), refOf("orders", idA, 1), refOf("orders", idA, 2)}
	want := make([][]deadletter.Record, len(refs))
	for _, ref := range refs {
		makePartition(t, mem, ref)
	}
	for round := range 4 {
		for i, ref := range refs {
			r := count(int64(round), uint32(i+1))
			must(t, s.Append(ref, []deadletter.Record{r}))
			want[i] = append(want[i], r)
			s.mu.Lock()
			held := s.held
			s.mu.Unlock()
			if held > 2 {
				t.Fatalf("round %d: %d descriptors held over a cap of 2", round, held)
			}
		}
	}
	for i, ref := range refs {
		wantRecords(t, ref.String(), mustLoad(t, newStore(t, mem), ref), want[i])
	}
}

// ensure that after Close every call but Size is refused with
// domain.ErrClosed.
func TestClosedStore(t *testing.T) {
	mem := vfs.NewMem()
	ref := refOf("orders", idA, 0)
	makePartition(t, mem, ref)
	s := newStore(t, mem)
	must(t, s.Append(ref, []deadletter.Record{count(1, 1)}))
	must(t, s.Close())
	wantErr(t, s.Append(ref, []deadletter.Record{count(2, 1)}), domain.ErrClosed, "Append")
	wantErr(t, s.Compact(ref, nil), domain.ErrClosed, "Compact")
	_, err := s.Load(ref)
	wantErr(t, err, domain.ErrClosed, "Load")
	if s.Size(ref) != 0 {
		t.Fatalf("Size after Close: %d", s.Size(ref))
	}
}

// ensure that partitions are served concurrently under a small descriptor
// cap (evictions of idle partitions included) and none loses a record.
func TestConcurrentPartitions(t *testing.T) {
	mem := vfs.NewMem()
	s, err := New(Options{FS: mem, DataDir: dataDir, MaxHeld: 2})
	must(t, err)
	defer s.Close()
	const parts, batches = 4, 25
	errs := make(chan error, parts)
	for i := range parts {
		ref := refOf("orders", idA, int32(i))
		makePartition(t, mem, ref)
		go func() {
			for b := range batches {
				if err := s.Append(ref, []deadletter.Record{count(int64(b), uint32(i+1))}); err != nil {
					errs <- err
					return
				}
				_ = s.Size(ref)
			}
			errs <- nil
		}()
	}
	for range parts {
		must(t, <-errs)
	}
	for i := range parts {
		ref := refOf("orders", idA, int32(i))
		got := mustLoad(t, newStore(t, mem), ref)
		if len(got) != batches || got[batches-1] != count(batches-1, uint32(i+1)) {
			t.Fatalf("%s: %d records %v, want %d", ref, len(got), got, batches)
		}
	}
}

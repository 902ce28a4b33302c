package schedulefile

import (
	"bytes"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// everyShape is a batch with edge keys and payloads: no key, an empty
// non-nil key, keys and payloads with zero bytes, and the largest of both.
func everyShape() []domain.Record {
	return []domain.Record{
		rec(1, "", "p"),
		{DeliverAtMs: 2, Key: []byte{}, Payload: []byte("empty key")},
		rec(bucketMs+59_999, "k", "\x00\x01\x00"),
		rec(1<<62, "\x00", strings.Repeat("x", 300)),
		{DeliverAtMs: 1<<63 - 1, Key: bytes.Repeat([]byte{0xff}, recordKeyMaxBytes), Payload: bytes.Repeat([]byte{7}, recordPayloadMaxBytes)},
	}
}

// ensure that appended batches read back exactly from the entries Append
// answers and from those a reopen answers, that Records, Pending and Size
// follow, and that Size is the file's length.
func TestRoundTrip(t *testing.T) {
	mem := newMem(t)
	b, entries := mustOpen(t, mem, true)
	if len(entries) != 0 || b.Records() != 0 || b.Pending() != 0 || b.Size() != 0 {
		t.Fatalf("a new bucket: %v, %d records, %d pending, %d bytes", entries, b.Records(), b.Pending(), b.Size())
	}
	first, second := everyShape(), []domain.Record{rec(5, "again", "two"), rec(5, "", "three")}
	e1 := mustAppend(t, b, first)
	if got, err := b.Append(nil); got != nil || err != nil {
		t.Fatalf("an empty batch: %v, %v", got, err)
	}
	e2 := mustAppend(t, b, second)
	want := append(numbered(0, first...), numbered(uint32(len(first)), second...)...)
	wantEntries(t, "as appended", b, append(e1, e2...), want)
	if b.Records() != len(want) || b.Pending() != len(want) {
		t.Fatalf("%d records, %d pending, want %d", b.Records(), b.Pending(), len(want))
	}
	if size := fileSize(t, mem); b.Size() != size || size != e2[len(e2)-1].Pos+int64(e2[len(e2)-1].Size)+int64(len(appendCommitFrame(nil, 2))) {
		t.Fatalf("Size %d, file %d bytes", b.Size(), size)
	}
	for i, e := range e1 {
		if i > 0 && e.Pos != e1[i-1].Pos+int64(e1[i-1].Size) {
			t.Fatalf("entry %d at %d, not right after entry %d", i, e.Pos, i-1)
		}
	}
	got, err := b.Read(e1[2])
	must(t, err)
	if cap(got.Key) != len(got.Key) {
		t.Fatalf("a key with room to grow (%d of %d) would clobber the payload", len(got.Key), cap(got.Key))
	}
	must(t, b.Close())
	reopened, entries := mustOpen(t, mem, false)
	wantEntries(t, "reopened", reopened, entries, want)
	if reopened.Size() != b.Size() || reopened.Records() != len(want) || reopened.Pending() != len(want) {
		t.Fatalf("reopened: %d bytes, %d records, %d pending", reopened.Size(), reopened.Records(), reopened.Pending())
	}
}

// ensure that fired ordinals (duplicates included) are gone after a
// reopen, that the ordinals of later batches go on from the file's count,
// and that a bucket fully fired answers no entries.
func TestReopenHidesFired(t *testing.T) {
	mem := newMem(t)
	b, _ := mustOpen(t, mem, true)
	a := []domain.Record{rec(10, "a", "0"), rec(11, "", "1"), rec(12, "c", "2")}
	mustAppend(t, b, a)
	must(t, b.MarkFired([]uint32{1}))
	must(t, b.MarkFired([]uint32{1, 0, 1}))
	if b.Pending() != 1 || b.Records() != 3 {
		t.Fatalf("%d pending of %d, want 1 of 3", b.Pending(), b.Records())
	}
	must(t, b.MarkFired(nil))
	size := b.Size()
	must(t, b.Close())
	if fileSize(t, mem) != size {
		t.Fatalf("file %d bytes, Size %d", fileSize(t, mem), size)
	}

	b, entries := mustOpen(t, mem, false)
	wantEntries(t, "after firing 0 and 1", b, entries, numbered(2, a[2]))
	c := []domain.Record{rec(20, "d", "3"), rec(21, "e", "4")}
	wantEntries(t, "appended after a reopen", b, mustAppend(t, b, c), numbered(3, c...))
	must(t, b.MarkFired([]uint32{3}))
	must(t, b.Close())

	b, entries = mustOpen(t, mem, false)
	wantEntries(t, "after firing 3", b, entries, []sched{{2, a[2]}, {4, c[1]}})
	must(t, b.MarkFired([]uint32{4, 2}))
	if b.Pending() != 0 {
		t.Fatalf("%d pending, want 0", b.Pending())
	}
	must(t, b.Close())

	b, entries = mustOpen(t, mem, false)
	if len(entries) != 0 || b.Pending() != 0 || b.Records() != 5 {
		t.Fatalf("fully fired: %v, %d pending of %d", entries, b.Pending(), b.Records())
	}
}

// ensure that Open without create answers fs.ErrNotExist for a missing
// file and creates nothing, and that Open with create leaves a file whose
// entry and (empty) data survive a machine crash.
func TestOpenMissing(t *testing.T) {
	mem := newMem(t)
	_, _, err := Open(mem, bucketPath, false)
	wantErr(t, err, fs.ErrNotExist, "open without create")
	if _, err := mem.Stat(bucketPath); err == nil {
		t.Fatal("open without create made the file")
	}
	mustOpen(t, mem, true)
	crashed := mem.Crash(vfs.CrashOptions{})
	if _, err := crashed.Stat(bucketPath); err != nil {
		t.Fatalf("the created file after a crash: %v", err)
	}
	_, _, err = Open(vfs.NewMem(), bucketPath, true)
	wantErr(t, err, fs.ErrNotExist, "create in a missing directory")
}

// ensure that a file created by an Open whose directory sync failed has
// its entry synced before the first Append is acknowledged.
func TestEntrySyncedBeforeFirstAppend(t *testing.T) {
	mem := newMem(t)
	faults := &vfs.Faults{}
	fsys := vfs.Inject(mem, faults.Hook)
	faults.FailNext(vfs.OpSyncDir, partDir)
	_, _, err := Open(fsys, bucketPath, true)
	wantErr(t, err, vfs.ErrInjected, "open with a failing directory sync")
	if _, err := mem.Crash(vfs.CrashOptions{}).Stat(bucketPath); err == nil {
		t.Fatal("the entry is durable without a directory sync: the test proves nothing")
	}
	b, _ := mustOpen(t, fsys, true)
	faults.FailNext(vfs.OpSyncDir, partDir)
	_, err = b.Append([]domain.Record{rec(1, "", "lost")})
	wantErr(t, err, vfs.ErrInjected, "append with a failing directory sync")
	recs := []domain.Record{rec(2, "k", "kept")}
	mustAppend(t, b, recs)
	crashed, entries := mustOpen(t, mem.Crash(vfs.CrashOptions{}), false)
	wantEntries(t, "after a crash", crashed, entries, numbered(0, recs...))
}

// ensure that Append refuses a batch holding a record the format cannot
// hold and writes nothing of it.
func TestAppendRefusals(t *testing.T) {
	mem := newMem(t)
	b, _ := mustOpen(t, mem, true)
	mustAppend(t, b, []domain.Record{rec(1, "", "ok")})
	size := b.Size()
	for _, tc := range []struct {
		name   string
		bad    domain.Record
		target error
	}{
		{"nil payload", domain.Record{DeliverAtMs: 1}, domain.ErrInvalidRecord},
		{"empty payload", domain.Record{DeliverAtMs: 1, Payload: []byte{}}, domain.ErrInvalidRecord},
		{"zero deliver_at", rec(0, "", "p"), domain.ErrInvalidRecord},
		{"negative deliver_at", rec(-5, "", "p"), domain.ErrInvalidRecord},
		{"key over the cap", domain.Record{DeliverAtMs: 1, Key: make([]byte, recordKeyMaxBytes+1), Payload: []byte("p")}, domain.ErrRecordTooLarge},
		{"payload over the cap", domain.Record{DeliverAtMs: 1, Payload: make([]byte, recordPayloadMaxBytes+1)}, domain.ErrRecordTooLarge},
	} {
		_, err := b.Append([]domain.Record{rec(3, "", "good"), tc.bad})
		wantErr(t, err, tc.target, tc.name)
		if b.Size() != size || fileSize(t, mem) != size || b.Records() != 1 {
			t.Fatalf("%s: %d records, %d bytes, file %d, want 1 and %d", tc.name, b.Records(), b.Size(), fileSize(t, mem), size)
		}
	}
}

// ensure that MarkFired refuses an ordinal not acknowledged and writes
// nothing then, nor for an empty list.
func TestMarkFiredRefusals(t *testing.T) {
	mem := newMem(t)
	b, _ := mustOpen(t, mem, true)
	wantErr(t, b.MarkFired([]uint32{0}), domain.ErrInvalidArgument, "an empty bucket")
	mustAppend(t, b, []domain.Record{rec(1, "", "a"), rec(1, "", "b")})
	size := b.Size()
	wantErr(t, b.MarkFired([]uint32{0, 2}), domain.ErrInvalidArgument, "ordinal 2 of 2")
	wantErr(t, b.MarkFired([]uint32{1 << 31}), domain.ErrInvalidArgument, "a huge ordinal")
	must(t, b.MarkFired([]uint32{}))
	if b.Size() != size || fileSize(t, mem) != size || b.Pending() != 2 {
		t.Fatalf("after refusals: %d bytes, file %d, %d pending; want %d and 2", b.Size(), fileSize(t, mem), b.Pending(), size)
	}
}

// ensure that Read answers domain.ErrRecordCorrupt for a record frame with
// any bit flipped and for an entry that does not match its frame, and
// domain.ErrInvalidArgument for one outside the good end.
func TestReadDetectsCorruption(t *testing.T) {
	mem := newMem(t)
	b, _ := mustOpen(t, mem, true)
	entries := mustAppend(t, b, []domain.Record{rec(7, "key", "payload"), rec(8, "", "second")})
	e := entries[0]
	for off := e.Pos; off < e.Pos+int64(e.Size); off++ {
		bit := uint(off % 8)
		must(t, vfs.FlipBit(mem, bucketPath, off, bit))
		_, err := b.Read(e)
		wantErr(t, err, domain.ErrRecordCorrupt, "a bit flipped at "+itoa(off))
		must(t, vfs.FlipBit(mem, bucketPath, off, bit))
	}
	_, err := b.Read(e)
	must(t, err)
	commitPos := entries[1].Pos + int64(entries[1].Size)
	for name, bad := range map[string]Entry{
		"wrong deliver_at":    {Ordinal: 0, DeliverAtMs: 9, Pos: e.Pos, Size: e.Size},
		"size one short":      {DeliverAtMs: 7, Pos: e.Pos, Size: e.Size - 1},
		"two frames as one":   {DeliverAtMs: 7, Pos: e.Pos, Size: e.Size + entries[1].Size},
		"mid-frame":           {DeliverAtMs: 7, Pos: e.Pos + 1, Size: e.Size},
		"the commit frame":    {DeliverAtMs: 7, Pos: commitPos, Size: uint32(b.Size() - commitPos)},
		"the second's record": {DeliverAtMs: 7, Pos: entries[1].Pos, Size: entries[1].Size},
	} {
		_, err := b.Read(bad)
		wantErr(t, err, domain.ErrRecordCorrupt, name)
	}
	for name, bad := range map[string]Entry{
		"past the end":   {DeliverAtMs: 8, Pos: entries[1].Pos + 1, Size: entries[1].Size + uint32(b.Size()-commitPos)},
		"negative pos":   {DeliverAtMs: 7, Pos: -1, Size: e.Size},
		"zero size":      {DeliverAtMs: 7, Pos: e.Pos},
		"header only":    {DeliverAtMs: 7, Pos: e.Pos, Size: frameHeaderBytes},
		"over the frame": {DeliverAtMs: 7, Pos: 0, Size: frameMaxBytes + 1},
	} {
		_, err := b.Read(bad)
		wantErr(t, err, domain.ErrInvalidArgument, name)
	}
}

// ensure that a closed bucket refuses every operation but Close.
func TestClosed(t *testing.T) {
	b, _ := mustOpen(t, newMem(t), true)
	entries := mustAppend(t, b, []domain.Record{rec(1, "", "a")})
	must(t, b.Close())
	must(t, b.Close())
	_, err := b.Append([]domain.Record{rec(1, "", "b")})
	wantErr(t, err, domain.ErrClosed, "append")
	_, err = b.Read(entries[0])
	wantErr(t, err, domain.ErrClosed, "read")
	wantErr(t, b.MarkFired([]uint32{0}), domain.ErrClosed, "mark fired")
}

// ensure that the bucket works on the real filesystem too.
func TestOSFilesystem(t *testing.T) {
	path := filepath.Join(t.TempDir(), Name(60_000))
	b, _, err := Open(vfs.OS{}, path, true)
	must(t, err)
	recs := everyShape()
	mustAppend(t, b, recs)
	must(t, b.MarkFired([]uint32{0, 3}))
	mustAppend(t, b, []domain.Record{rec(9, "z", "late")})
	must(t, b.Close())
	b, entries, err := Open(vfs.OS{}, path, false)
	must(t, err)
	defer b.Close()
	want := []sched{{1, recs[1]}, {2, recs[2]}, {4, recs[4]}, {5, rec(9, "z", "late")}}
	wantEntries(t, "reopened from disk", b, entries, want)
}

// ensure that a file larger than Open's read window, with frames across
// its boundaries, loads whole.
func TestOpenReadsThroughWindow(t *testing.T) {
	mem := newMem(t)
	b, _ := mustOpen(t, mem, true)
	var want []sched
	for i := range 9 {
		batch := []domain.Record{
			{DeliverAtMs: int64(i + 1), Payload: bytes.Repeat([]byte{byte(i)}, recordPayloadMaxBytes-i*1013)},
			rec(int64(i+1), "k"+itoa(int64(i)), strings.Repeat("s", 1+i*37)),
		}
		mustAppend(t, b, batch)
		want = append(want, numbered(uint32(2*i), batch...)...)
	}
	must(t, b.Close())
	if fileSize(t, mem) < 2*readWindowBytes {
		t.Fatalf("the file is %d bytes, within two windows", fileSize(t, mem))
	}
	b, entries := mustOpen(t, mem, false)
	wantEntries(t, "past the window", b, entries, want)
}

// ensure that more ordinals than one fired frame holds take several
// frames, each under the body cap, that together name them all, and that
// the largest record body is under the cap too.
func TestFrameCaps(t *testing.T) {
	ordinals := make([]uint32, firedFrameOrdinalsMax+3)
	for i := range ordinals {
		ordinals[i] = recordsMax - 1 - uint32(i)
	}
	buf := appendFiredFrames(nil, ordinals)
	var got []uint32
	for frames := 0; len(buf) > 0; frames++ {
		f, n, ok := decodeFrame(buf)
		if !ok || f.kind != kindFired || frames > 1 {
			t.Fatalf("frame %d: ok %v kind %d", frames, ok, f.kind)
		}
		for o := range f.firedOrdinals() {
			got = append(got, o)
		}
		buf = buf[n:]
	}
	if len(got) != len(ordinals) || got[0] != ordinals[0] || got[len(got)-1] != ordinals[len(ordinals)-1] {
		t.Fatalf("%d ordinals back of %d", len(got), len(ordinals))
	}
	largest := appendRecordFrame(nil, 1<<63-1, make([]byte, recordKeyMaxBytes), make([]byte, recordPayloadMaxBytes))
	if len(largest) > frameMaxBytes {
		t.Fatalf("the largest record frame is %d bytes, over the cap of %d", len(largest), frameMaxBytes)
	}
	if _, _, ok := decodeFrame(largest); !ok {
		t.Fatal("the largest record frame does not decode")
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

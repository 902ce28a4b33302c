package schedulefile

import (
	"bytes"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// layout is a file the tests build frame by frame, with the good end after
// each step.
type layout struct {
	bytes []byte
	ends  []int64
}

func (l *layout) add(frames []byte) *layout {
	l.bytes = append(l.bytes, frames...)
	l.ends = append(l.ends, int64(len(l.bytes)))
	return l
}

// batchFrames is what Append writes for recs.
func batchFrames(recs ...domain.Record) []byte {
	return appendCommitFrame(recordFrames(recs...), uint32(len(recs)))
}

// recordFrames is recs' record frames, without a commit.
func recordFrames(recs ...domain.Record) []byte {
	var out []byte
	for _, r := range recs {
		out = appendRecordFrame(out, r.DeliverAtMs, r.Key, r.Payload)
	}
	return out
}

var (
	batchA = []domain.Record{rec(100, "a", "first"), rec(101, "", "second")}
	batchB = []domain.Record{rec(200, "b", "third"), rec(201, "bb", "fourth"), rec(202, "", "fifth")}
	batchC = []domain.Record{rec(300, "c", "sixth"), rec(301, "", "seventh")}
)

// openCut opens file (written durably), checks that Open answers want and
// cut the file to good, and that an Append after it lands and reads back,
// also after a reopen.
func openCut(t *testing.T, what string, file []byte, good int64, want []sched) {
	t.Helper()
	mem := newMem(t)
	writeFile(t, mem, file)
	b, entries, err := Open(mem, bucketPath, false)
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	defer b.Close()
	if err := checkEntries(b, entries, want); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if b.Size() != good || fileSize(t, mem) != good {
		t.Fatalf("%s: Size %d, file %d bytes, want both %d", what, b.Size(), fileSize(t, mem), good)
	}
	if !bytes.Equal(fileBytes(t, mem.Crash(vfs.CrashOptions{})), file[:good]) {
		t.Fatalf("%s: the cut is not durable", what)
	}
	next := rec(999, "n", "next")
	if _, err := b.Append([]domain.Record{next}); err != nil {
		t.Fatalf("%s: append after the cut: %v", what, err)
	}
	must(t, b.Close())
	b, entries, err = Open(mem, bucketPath, false)
	if err != nil {
		t.Fatalf("%s: reopen: %v", what, err)
	}
	if err := checkEntries(b, entries, append(want, sched{uint32(b.Records() - 1), next})); err != nil {
		t.Fatalf("%s: after an append past the cut: %v", what, err)
	}
}

// ensure that a file cut at any byte inside its last batch, or inside a
// last fired frame, opens to exactly the records acknowledged before it,
// cut to the good end, and takes Appends after it.
func TestTornTailEveryOffset(t *testing.T) {
	l := (&layout{}).add(batchFrames(batchA...)).add(appendFiredFrame(nil, []uint32{0})).
		add(batchFrames(batchB...)).add(batchFrames(batchC...))
	beforeC := append(numbered(1, batchA[1]), numbered(2, batchB...)...)
	for cut := l.ends[2]; cut < l.ends[3]; cut++ {
		openCut(t, "last batch cut at "+itoa(cut), l.bytes[:cut], l.ends[2], beforeC)
	}
	openCut(t, "whole", l.bytes, l.ends[3], append(beforeC, numbered(5, batchC...)...))

	f := (&layout{}).add(batchFrames(batchA...)).add(batchFrames(batchB...)).add(appendFiredFrame(nil, []uint32{4, 0}))
	unfired := append(numbered(0, batchA...), numbered(2, batchB...)...)
	for cut := f.ends[1]; cut < f.ends[2]; cut++ {
		openCut(t, "fired frame cut at "+itoa(cut), f.bytes[:cut], f.ends[1], unfired)
	}
	openCut(t, "fired frame whole", f.bytes, f.ends[2], append(numbered(1, batchA[1]), numbered(2, batchB[:2]...)...))
}

// ensure that a bit flipped anywhere in a batch ends the file before that
// batch, taking later good batches with it.
func TestBitFlipEndsTheFile(t *testing.T) {
	l := (&layout{}).add(batchFrames(batchA...)).add(batchFrames(batchB...)).add(batchFrames(batchC...))
	for _, tc := range []struct {
		name string
		from int64
		to   int64
		good int64
		want []sched
	}{
		{"last batch", l.ends[1], l.ends[2], l.ends[1], append(numbered(0, batchA...), numbered(2, batchB...)...)},
		{"middle batch", l.ends[0], l.ends[1], l.ends[0], numbered(0, batchA...)},
	} {
		for off := tc.from; off < tc.to; off++ {
			file := bytes.Clone(l.bytes)
			file[off] ^= 1 << (off % 8)
			openCut(t, tc.name+" flipped at "+itoa(off), file, tc.good, tc.want)
		}
	}
}

// ensure that frames breaking the protocol end the file where they start:
// a batch without its commit, a count that does not match, a fired frame
// inside a batch or naming an ordinal not acknowledged, a commit closing
// nothing, an unknown kind, and bodies that do not decode exactly.
func TestProtocolBreaksEndTheFile(t *testing.T) {
	a := batchFrames(batchA...)
	good := int64(len(a))
	wantA := numbered(0, batchA...)
	for _, tc := range []struct {
		name string
		tail []byte
	}{
		{"batch without its commit", recordFrames(batchB...)},
		{"batch without its commit, then a batch", append(recordFrames(batchB...), batchFrames(batchC...)...)},
		{"count one short", append(recordFrames(batchB...), appendCommitFrame(nil, 2)...)},
		{"count one over", append(recordFrames(batchB...), appendCommitFrame(nil, 4)...)},
		{"commit closing nothing", appendCommitFrame(nil, 1)},
		{"fired inside a batch", append(append(recordFrames(batchB[0]), appendFiredFrame(nil, []uint32{0})...), batchFrames(batchB[1])...)},
		{"fired ordinal not acknowledged", appendFiredFrame(nil, []uint32{0, 2})},
		{"fired ordinal of the batch after", append(appendFiredFrame(nil, []uint32{3}), batchFrames(batchB...)...)},
		{"unknown kind", frameOf([]byte{4, 1})},
		{"empty body", frameOf(nil)},
		{"zero deliver_at", frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 1, 'p'))},
		{"deliver_at past MaxInt64", frameOf(append([]byte{kindRecord, 0x80, 0, 0, 0, 0, 0, 0, 1}, 0, 1, 'p'))},
		{"empty payload", frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 1}, 0, 0))},
		{"trailing byte", frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 1}, 0, 1, 'p', 'q'))},
		{"payload past the body", frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 1}, 0, 3, 'p'))},
		{"non-minimal key length", frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 1}, 0x80, 0x00, 1, 'p'))},
		{"zero fired count", frameOf([]byte{kindFired, 0})},
		{"fired count past its ordinals", frameOf([]byte{kindFired, 2, 0})},
		{"fired trailing byte", frameOf([]byte{kindFired, 1, 0, 0})},
		{"zero commit count", frameOf([]byte{kindCommit, 0})},
		{"commit trailing byte", frameOf([]byte{kindCommit, 1, 0})},
		{"body length over the cap", append(bigEndian32(frameBodyMaxBytes+1), make([]byte, 4+frameBodyMaxBytes+1)...)},
		{"zeros", make([]byte, 64)},
	} {
		openCut(t, tc.name, append(bytes.Clone(a), tc.tail...), good, wantA)
	}
}

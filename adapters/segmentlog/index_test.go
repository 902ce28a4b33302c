package segmentlog

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// ensure that the sparse index stays within its anchor budget by widening
// its stride, keeps the anchor after every gap, and always sends a lookup to
// an anchor at or before the offset with a walk limit after it.
func TestSparseIndexThinsAndSeeks(t *testing.T) {
	x := newSparseIndex(0)
	const frames, frameBytes = 6000, 16 << 10
	pos, off := int64(0), int64(0)
	gaps := map[int64]bool{}
	for i := range frames {
		if i%997 == 0 && i > 0 {
			off += 5 // a gap of five offsets
			gaps[off] = true
		}
		h := frameHeader{count: 3, base: off, storedSize: frameBytes - frameHeaderBytes}
		x.add(pos, h)
		pos, off = pos+frameBytes, off+3
	}
	if len(x.anchors) > indexAnchorsMax {
		t.Fatalf("%d anchors, budget %d", len(x.anchors), indexAnchorsMax)
	}
	for g := range gaps {
		found := false
		for _, a := range x.anchors {
			found = found || (a.off == g && a.gapBefore)
		}
		if !found {
			t.Fatalf("the anchor after the gap at offset %d was thinned away", g)
		}
	}
	for q := int64(0); q < off; q += 7 {
		start, limit, ok := x.seek(q)
		if !ok {
			continue // inside a gap before the first anchor of a run: only at gaps
		}
		if start >= limit || start%frameBytes != 0 {
			t.Fatalf("seek(%d) = [%d, %d)", q, start, limit)
		}
	}
	if _, _, ok := x.seek(off); ok {
		t.Fatal("seek past the last indexed offset succeeded")
	}
}

// ensure that reads land correctly anywhere in a log of many small frames
// spread over many sealed segments (cold indexes rebuilt from headers, more
// segments than the hot set holds) and the active one.
func TestRandomReadsAcrossSegments(t *testing.T) {
	mem := vfs.NewMem()
	opts := testOptions(mem, newFakeClock())
	opts.SegmentMaxBytes = 96 << 10
	s := mustOpen(t, opts)
	ref := testRef(0)
	var all []domain.Record
	for i := range 600 {
		recs := batch(i, 1+i%4)
		for j := range recs {
			recs[j].Payload = append(recs[j].Payload, make([]byte, 500)...)
		}
		mustCommit(t, s, ref, recs)
		all = append(all, recs...)
	}
	s = (&faultRig{opts: opts}).reopen(t, s) // cold: nothing cached, no index built
	defer func() { _ = s.Close() }()
	if bases := segmentBases(t, mem, ref); len(bases) < 6 {
		t.Fatalf("only %d segments; the test needs more than the hot set holds", len(bases))
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		from := rnd.Int64N(int64(len(all)))
		n := 1 + rnd.IntN(40)
		got, err := s.Read(context.Background(), ref, from, n, 0)
		if err != nil {
			t.Fatalf("Read(%d, %d): %v", from, n, err)
		}
		want := all[from:min(int(from)+n, len(all))]
		if len(got) != len(want) {
			t.Fatalf("Read(%d, %d) returned %d records, want %d", from, n, len(got), len(want))
		}
		checkRange(t, s, ref, from, want)
	}
}

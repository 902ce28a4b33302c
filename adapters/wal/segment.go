package wal

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// segment is one segment file: its base (the first sequence it may hold) and
// a sparse index of verified frame positions, grown by replay and by reads.
type segment struct {
	base uint64
	path string
	// end is the data end of a sealed segment, set (under WAL.mu, or by
	// replay) before its successor joins the segment list; readers that see
	// the successor may use it. Unused while the segment is active.
	end int64
	// deleted is set by compaction before the file goes.
	deleted atomic.Bool

	mu    sync.Mutex
	index []indexEntry // ascending by seq and offset
	after indexEntry   // where the last read stopped: a frame start (or the data end)
}

// indexEntry says frame seq starts at byte off of its segment.
type indexEntry struct {
	seq uint64
	off int64
}

func newSegment(dir string, base uint64, index []indexEntry) *segment {
	return &segment{base: base, path: segmentPath(dir, base), index: index}
}

func (s *segment) isDeleted() bool { return s.deleted.Load() }

// segmentName is "<20-digit zero-padded base>.wal".
func segmentName(base uint64) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, base, segmentFileSuffix)
}

func segmentPath(dir string, base uint64) string {
	return filepath.Join(dir, segmentName(base))
}

// parseSegmentName returns the base of a segment file name; ok is false for
// any other name.
func parseSegmentName(name string) (base uint64, ok bool) {
	digits, found := strings.CutSuffix(name, segmentFileSuffix)
	if !found || len(digits) != segmentNameDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	base, err := strconv.ParseUint(digits, 10, 64)
	return base, err == nil
}

// segmentBases returns the bases of the segment files among names, ascending.
func segmentBases(names []string) []uint64 {
	var bases []uint64
	for _, n := range names {
		if b, ok := parseSegmentName(n); ok {
			bases = append(bases, b)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	return bases
}

// appendIndex adds (seq, off) when it lies at least indexIntervalBytes past
// the last entry (or is the first).
func appendIndex(index []indexEntry, seq uint64, off int64) []indexEntry {
	if n := len(index); n > 0 && (off-index[n-1].off < indexIntervalBytes || seq <= index[n-1].seq) {
		return index
	}
	return append(index, indexEntry{seq: seq, off: off})
}

// seek returns the closest known frame position at or below seq; the
// segment's first frame (base, 0) when nothing closer is known.
func (s *segment) seek(seq uint64) indexEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	best := indexEntry{seq: s.base}
	if i := sort.Search(len(s.index), func(i int) bool { return s.index[i].seq > seq }); i > 0 {
		best = s.index[i-1]
	}
	if s.after.seq <= seq && s.after.seq > best.seq {
		best = s.after
	}
	return best
}

// noteAfter records where a read stopped (the frame after the last one it
// verified starts there), so the next read from there need not walk from
// the last index entry: the dispatcher reads on from where it stopped.
func (s *segment) noteAfter(seq uint64, off int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq > s.after.seq {
		s.after = indexEntry{seq: seq, off: off}
	}
}

// note records a verified frame position for later seeks.
func (s *segment) note(seq uint64, off int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index = appendIndex(s.index, seq, off)
}

package wal

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// segment is one segment file: its base (the first sequence it may hold) and
// a sparse index of verified frame positions, grown by replay and by reads.
type segment struct {
	base uint64
	path string

	mu    sync.Mutex
	index []indexEntry // ascending by seq and offset
}

// indexEntry says frame seq starts at byte off of its segment.
type indexEntry struct {
	seq uint64
	off int64
}

func newSegment(dir string, base uint64, index []indexEntry) *segment {
	return &segment{base: base, path: segmentPath(dir, base), index: index}
}

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
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].seq > seq })
	if i == 0 {
		return indexEntry{seq: s.base}
	}
	return s.index[i-1]
}

// note records a verified frame position for later seeks.
func (s *segment) note(seq uint64, off int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.index = appendIndex(s.index, seq, off)
}

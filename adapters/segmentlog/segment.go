package segmentlog

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/narad/narad/adapters/vfs"
)

// segment is one file of a partition log. Its offsets run from base to the
// next segment's base (sealed) or to the log's next offset (active).
type segment struct {
	base int64
	path string

	// Guarded by the log's mu. For a segment recovered from disk both are its
	// mtime; zero firstWrite means the segment holds no record yet.
	firstWrite time.Time
	lastWrite  time.Time
	sizeBytes  int64

	// idx is the active segment's sparse index (sealed segments keep theirs in
	// the hot set).
	idx *sparseIndex
}

// frameLoc is where a frame sits in the active segment.
type frameLoc struct {
	pos   int64
	hdr   frameHeader
	inner []byte // a private copy of the inner bytes, kept for the write-through cache
}

func (f frameLoc) endPos() int64 { return f.pos + f.hdr.frameBytes() }

func segmentName(base int64) string {
	return fmt.Sprintf("%0*d%s", segmentNameDigits, base, segmentExt)
}

// parseSegmentName returns the base offset of a segment file name.
func parseSegmentName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, segmentExt)
	if !ok || len(digits) != segmentNameDigits {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	base, err := strconv.ParseInt(digits, 10, 64)
	return base, err == nil
}

func partitionDirName(partition int32) string {
	return fmt.Sprintf("p%0*d", partitionDirDigits, partition)
}

// listSegments returns the base offsets of dir's segments, ascending.
func listSegments(fsys vfs.FS, dir string) ([]int64, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var bases []int64
	for _, name := range names {
		if base, ok := parseSegmentName(name); ok {
			bases = append(bases, base)
		}
	}
	return bases, nil // names are zero-padded, so sorted names are sorted bases
}

func segmentPath(dir string, base int64) string {
	return filepath.Join(dir, segmentName(base))
}

package wal

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/narad/narad/adapters/vfs"
)

// replayed is what replay leaves for the writer.
type replayed struct {
	segments    []*segment // ascending by base; the last is active
	active      vfs.File   // the last segment, open for appends
	activeSize  int64      // its data end
	activeLimit int64      // its write limit when prepared; 0 if ordinary
	nextSeq     uint64
}

// replay scans every segment of dir in order (spec 2.7), truncates a torn
// tail of the last one and returns the writer's starting state. An empty
// directory gets segment 0. Damage that is not a torn tail of the last
// segment, and any sequence gap, fail with a *CorruptionError.
func replay(fsys vfs.FS, dir string) (replayed, error) {
	names, err := fsys.List(dir)
	if err != nil {
		return replayed{}, fmt.Errorf("list %s: %w", dir, err)
	}
	if slices.Contains(names, prepFileName) {
		// A spare left by an earlier process is never a segment: drop it.
		if err := fsys.Remove(filepath.Join(dir, prepFileName)); err != nil {
			return replayed{}, fmt.Errorf("remove stale %s: %w", prepFileName, err)
		}
	}
	bases := segmentBases(names)
	if len(bases) == 0 {
		f, err := createSegment(fsys, dir, 0)
		if err != nil {
			return replayed{}, err
		}
		return replayed{segments: []*segment{newSegment(dir, 0, nil)}, active: f}, nil
	}
	var out replayed
	next := bases[0]
	for i, base := range bases {
		path := segmentPath(dir, base)
		if base != next {
			out.closeActive()
			return replayed{}, &CorruptionError{File: path, Offset: 0,
				Reason: fmt.Sprintf("segment base %d where sequence %d was expected", base, next)}
		}
		res, err := out.replaySegment(fsys, path, base, i == len(bases)-1)
		if err != nil {
			out.closeActive()
			return replayed{}, err
		}
		seg := newSegment(dir, base, res.index)
		seg.end = res.validEnd
		out.segments = append(out.segments, seg)
		next = res.next
	}
	// next_seq = max(max seq + 1, last segment base): with dense sequences
	// and no gap between segments, that is the scan's next sequence.
	out.nextSeq = next
	return out, nil
}

// replaySegment scans one segment; for the last one it keeps the file open as
// the active segment, after cutting a torn tail.
func (out *replayed) replaySegment(fsys vfs.FS, path string, base uint64, last bool) (scanResult, error) {
	open := fsys.Open
	if last {
		open = fsys.OpenRW
	}
	f, err := open(path)
	if err != nil {
		return scanResult{}, fmt.Errorf("open segment: %w", err)
	}
	res, err := scanOpenSegment(f, path, base, last)
	if err == nil && res.torn {
		err = cutTornTail(f, res)
	}
	if err != nil || !last {
		return res, errors.Join(err, closeFile(f))
	}
	out.active, out.activeSize, out.activeLimit = f, res.validEnd, res.prepLimit
	return res, nil
}

func scanOpenSegment(f vfs.File, path string, base uint64, last bool) (scanResult, error) {
	size, err := f.Size()
	if err != nil {
		return scanResult{}, fmt.Errorf("size of %s: %w", path, err)
	}
	return scanSegment(f, size, path, base, last)
}

// cutTornTail makes the torn tail go durably: an ordinary segment is
// truncated to its last valid frame end; in a prepared one the bytes from
// there to the last non-zero byte are zeroed, so the data end is there and
// the file stays prepared. Either way no later append lands behind unknown
// bytes.
func cutTornTail(f vfs.File, res scanResult) error {
	if res.prepLimit == 0 {
		return truncateSynced(f, res.validEnd, "torn tail")
	}
	if err := zeroRange(f, res.validEnd, res.tornEnd, nil); err != nil {
		return fmt.Errorf("clear torn tail of prepared %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s after clearing its torn tail: %w", f.Name(), err)
	}
	return nil
}

func (out *replayed) closeActive() {
	if out.active != nil {
		_ = out.active.Close()
		out.active = nil
	}
}

// createSegment exclusive-creates the segment based at base and fsyncs the
// directory, so the name is durable before any append targets it.
func createSegment(fsys vfs.FS, dir string, base uint64) (vfs.File, error) {
	path := segmentPath(dir, base)
	f, err := fsys.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sync directory %s after creating %s: %w", dir, path, err)
	}
	return f, nil
}

func closeFile(f vfs.File) error {
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	return nil
}

package segmentlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/narad/narad/adapters/vfs"
)

// openLog opens (recovers) the partition log in cfg.dir, creating it empty
// if needed. Only the active segment is read: frame by frame with CRC, a torn
// tail cut off, damage under later valid frames left as a permanent gap.
// Sealed segments are only stat'ed.
func openLog(cfg logConfig) (*partitionLog, error) {
	if err := ensureDir(cfg.fsys, cfg.dir); err != nil {
		return nil, err
	}
	fileHWM, hwmSize, err := readHWMFile(cfg.fsys, filepath.Join(cfg.dir, hwmFileName))
	if err != nil {
		return nil, err
	}
	bases, err := listSegments(cfg.fsys, cfg.dir)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		base := int64(0)
		if hwmSize == hwmFileBytes {
			base = fileHWM
		}
		if err := createFirstSegment(cfg.fsys, cfg.dir, base); err != nil {
			return nil, err
		}
		bases = []int64{base}
	}
	l := &partitionLog{cfg: cfg, hot: newHotSet(cfg.fsys), cache: newFrameCache(), lastSync: time.Now()}
	for _, base := range bases[:len(bases)-1] {
		seg, err := statSegment(cfg.fsys, cfg.dir, base)
		if err != nil {
			return nil, err
		}
		l.segs = append(l.segs, seg)
	}
	if err := l.recoverActive(bases[len(bases)-1], fileHWM, hwmSize); err != nil {
		return nil, err
	}
	l.oldest.Store(bases[0])
	return l, nil
}

// recoverActive scans the active segment and settles the high watermark:
// min(hwm file, verified tail) for an 8-byte file; otherwise the verified
// tail, after an fsync of the segment (the tail was read through the page
// cache and may hold frames a crashed process never saw synced).
func (l *partitionLog) recoverActive(base, fileHWM, hwmSize int64) error {
	seg, err := statSegment(l.cfg.fsys, l.cfg.dir, base)
	if err != nil {
		return err
	}
	f, err := l.cfg.fsys.OpenRW(seg.path)
	if err != nil {
		return fmt.Errorf("open active segment: %w", err)
	}
	scan, err := scanSegment(f, base)
	if err == nil {
		err = l.settle(f, seg, scan, fileHWM, hwmSize)
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("recover %s: %w", seg.path, err)
	}
	return nil
}

func (l *partitionLog) settle(f vfs.File, seg *segment, scan scanResult, fileHWM, hwmSize int64) error {
	hwm, err := l.recoveredHWM(f, scan, fileHWM, hwmSize)
	if err != nil {
		return err
	}
	hwm = l.placeFrames(seg, scan.frames, hwm)
	if scan.validEnd == 0 {
		seg.firstWrite, seg.lastWrite = time.Time{}, time.Time{}
	}
	seg.sizeBytes = scan.validEnd
	l.active, l.file = seg, f
	l.segs = append(l.segs, seg)
	l.writePos, l.next = scan.validEnd, scan.tail
	l.full = l.writePos >= l.cfg.segMax
	l.hwm.Store(hwm)
	return nil
}

// recoveredHWM cuts a torn tail (fsynced) and returns the boundary: an
// 8-byte hwm file gives min(file, tail); otherwise the tail, once the segment
// is fsynced.
func (l *partitionLog) recoveredHWM(f vfs.File, scan scanResult, fileHWM, hwmSize int64) (int64, error) {
	synced := false
	if scan.validEnd < scan.size {
		if err := f.Truncate(scan.validEnd); err != nil {
			return 0, fmt.Errorf("cut torn tail at %d: %w", scan.validEnd, err)
		}
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("fsync cut tail: %w", err)
		}
		synced = true
	}
	l.released = hwmSize <= 0
	if hwmSize == hwmFileBytes {
		l.fileHWM = fileHWM
		return min(fileHWM, scan.tail), nil
	}
	if !synced {
		if err := f.Sync(); err != nil {
			return 0, fmt.Errorf("fsync before trusting the tail: %w", err)
		}
	}
	return scan.tail, nil
}

// placeFrames indexes the recovered frames below hwm and keeps the rest as
// the hidden tail. It returns hwm moved down to a frame edge if it fell
// inside a frame.
func (l *partitionLog) placeFrames(seg *segment, frames []frameLoc, hwm int64) int64 {
	seg.idx = newSparseIndex(seg.base)
	visible := 0
	for visible < len(frames) && frames[visible].hdr.end() <= hwm {
		seg.idx.add(frames[visible].pos, frames[visible].hdr)
		l.hwmPos = frames[visible].endPos()
		visible++
	}
	if visible < len(frames) && frames[visible].hdr.base < hwm {
		hwm = frames[visible].hdr.base
	}
	if visible < len(frames) {
		l.hidden = frames[visible:]
	}
	return hwm
}

// scanResult is what a CRC-verifying scan of the active segment found.
type scanResult struct {
	frames   []frameLoc // valid frames in order (gaps between them are damage)
	validEnd int64      // end of the last valid frame: everything after is torn
	tail     int64      // offset after the last valid frame
	size     int64
}

// scanSegment reads f frame by frame, checking every CRC through one reused
// buffer. A frame that does not verify is skipped only if a valid frame
// follows it (a gap); otherwise it and everything after is a torn tail.
func scanSegment(f vfs.File, base int64) (scanResult, error) {
	size, err := f.Size()
	if err != nil {
		return scanResult{}, fmt.Errorf("size: %w", err)
	}
	res := scanResult{tail: base, size: size}
	var buf []byte
	for pos := int64(0); pos < size; {
		h, ok, err := readVerified(f, pos, size, res.tail, &buf)
		if err != nil {
			return res, err
		}
		if ok {
			res.frames = append(res.frames, frameLoc{pos: pos, hdr: h})
			pos += h.frameBytes()
			res.validEnd, res.tail = pos, h.end()
			continue
		}
		next, _, found, err := findFrame(f, pos+1, size, res.tail)
		if err != nil {
			return res, err
		}
		if !found {
			break
		}
		pos = next
	}
	return res, nil
}

// readVerified reads the frame at pos into *buf and reports whether it is
// whole, below limit, at or after minBase, and passes its CRC.
func readVerified(f vfs.File, pos, limit, minBase int64, buf *[]byte) (frameHeader, bool, error) {
	if pos+frameHeaderBytes > limit {
		return frameHeader{}, false, nil
	}
	if cap(*buf) < frameHeaderBytes {
		*buf = make([]byte, 0, 64<<10)
	}
	hb := (*buf)[:frameHeaderBytes]
	if err := readFull(f, hb, pos); err != nil {
		return frameHeader{}, false, err
	}
	h, err := parseFrameHeader(hb)
	if err != nil || h.base < minBase || pos+h.frameBytes() > limit {
		return frameHeader{}, false, nil
	}
	if int64(cap(*buf)) < h.frameBytes() {
		*buf = make([]byte, 0, h.frameBytes())
	}
	raw := (*buf)[:h.frameBytes()]
	if err := readFull(f, raw, pos); err != nil {
		return frameHeader{}, false, err
	}
	if _, err := verifyFrame(raw); err != nil {
		return frameHeader{}, false, nil
	}
	return h, true, nil
}

func statSegment(fsys vfs.FS, dir string, base int64) (*segment, error) {
	path := segmentPath(dir, base)
	st, err := fsys.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat segment: %w", err)
	}
	return &segment{base: base, path: path, firstWrite: st.ModTime(), lastWrite: st.ModTime(), sizeBytes: st.Size()}, nil
}

// createSegment creates a new segment file. A leftover file of that name (a
// roll whose cleanup failed) holds nothing visible and is emptied.
func createSegment(fsys vfs.FS, path string) (vfs.File, error) {
	f, err := fsys.Create(path)
	if !errors.Is(err, fs.ErrExist) {
		return f, err
	}
	if f, err = fsys.OpenRW(path); err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

func createFirstSegment(fsys vfs.FS, dir string, base int64) error {
	f, err := createSegment(fsys, segmentPath(dir, base))
	if err != nil {
		return fmt.Errorf("create first segment: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create first segment: %w", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("create first segment: sync %s: %w", dir, err)
	}
	return nil
}

// ensureDir creates dir and any missing parents, making each new entry
// durable in its parent.
func ensureDir(fsys vfs.FS, dir string) error {
	if _, err := fsys.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := ensureDir(fsys, parent); err != nil {
			return err
		}
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := fsys.SyncDir(parent); err != nil {
		return fmt.Errorf("create %s: sync parent: %w", dir, err)
	}
	return nil
}

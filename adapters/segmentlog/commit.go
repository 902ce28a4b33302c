package segmentlog

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/narad/narad/domain"
)

// readBackPool holds the buffers commits read their frames back into.
var readBackPool = sync.Pool{New: func() any { return new([]byte) }}

// commit appends recs and makes them durable and visible: drain and write,
// one fsync, read back and CRC-check every frame written, advance the high
// watermark. On any failure nothing is left above the high watermark, so the
// retry gets the same offsets. The caller holds the partition's produce lock.
func (l *partitionLog) commit(recs []domain.Record) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return 0, err
	}
	first := l.appendLocked(recs)
	if err := l.flushLocked(); err != nil {
		l.rollbackLocked()
		return 0, fmt.Errorf("commit %d records at %d in %s: %w", len(recs), first, l.cfg.dir, err)
	}
	return first, nil
}

// flushLocked writes everything buffered and, if anything was written,
// syncs, verifies and advances.
func (l *partitionLog) flushLocked() error {
	if l.buf.count() > 0 {
		if err := l.writeBufferLocked(); err != nil {
			return err
		}
	}
	if len(l.written) == 0 {
		return nil // a hidden tail alone stays hidden
	}
	return l.syncAndAdvanceLocked()
}

// writeBufferLocked encodes the buffer into frames and writes them after
// everything already in the active segment, rolling first if the segment is
// full or too old.
func (l *partitionLog) writeBufferLocked() error {
	if err := l.rollIfDueLocked(); err != nil {
		return err
	}
	start := time.Now()
	frames, err := l.encodeBufferLocked()
	if err != nil {
		return err
	}
	defer func() { clear(l.encoded); l.encoded = l.encoded[:0] }()
	if _, err := l.file.WriteAt(l.frameBuf, l.writePos); err != nil {
		return fmt.Errorf("write %s at %d: %w", l.active.path, l.writePos, err)
	}
	l.cfg.obs.Flushed(l.cfg.key.topic, l.cfg.key.partition, int64(len(l.frameBuf)), time.Since(start))
	now := l.cfg.now()
	if l.active.firstWrite.IsZero() {
		l.active.firstWrite = now
	}
	l.active.lastWrite = now
	l.written = append(l.written, frames...)
	l.writePos += int64(len(l.frameBuf))
	l.unsynced += int64(len(l.frameBuf))
	l.active.sizeBytes = l.writePos
	l.full = l.writePos >= l.cfg.segMax
	l.buf.reset()
	return nil
}

// encodeBufferLocked fills frameBuf with the buffer's frames, each holding at
// most frameInnerSplitBytes of records.
func (l *partitionLog) encodeBufferLocked() ([]frameLoc, error) {
	keep := l.readSinceWrite.Load()
	base := l.next - int64(l.buf.count())
	l.frameBuf = l.frameBuf[:0]
	frames := l.encoded[:0]
	start, startByte := 0, 0
	l.cuts = splitFrames(l.cuts[:0], l.buf.ends, frameInnerSplitBytes)
	for _, end := range l.cuts {
		endByte := l.buf.ends[end-1]
		inner := l.buf.data[startByte:endByte]
		pos := l.writePos + int64(len(l.frameBuf))
		var h frameHeader
		var err error
		if l.frameBuf, h, err = appendFrame(l.frameBuf, l.cfg.codecs, base+int64(start), end-start, inner); err != nil {
			return nil, err
		}
		loc := frameLoc{pos: pos, hdr: h}
		if keep && len(inner) <= writeThroughFrameBytesMax {
			loc.inner = bytes.Clone(inner)
		}
		frames = append(frames, loc)
		start, startByte = end, endByte
	}
	l.encoded = frames
	return frames, nil
}

// splitFrames cuts records (given by their cumulative end positions) into
// runs whose bytes stay within limit (a single larger record gets its own
// run) and appends to cuts the record index ending each run.
func splitFrames(cuts, ends []int, limit int) []int {
	startByte := 0
	for i := range ends {
		if i > 0 && ends[i]-startByte > limit {
			cuts = append(cuts, i)
			startByte = ends[i-1]
		}
	}
	return append(cuts, len(ends))
}

// syncAndAdvanceLocked makes the written frames durable and visible: fsync,
// read-back, the one-time release of the hwm file, the roll of a full
// segment, then the advance. Only the advance cannot fail.
func (l *partitionLog) syncAndAdvanceLocked() error {
	start := time.Now()
	err := l.file.Sync()
	l.cfg.obs.Fsynced(l.cfg.key.topic, l.cfg.key.partition, time.Since(start))
	if err != nil {
		l.poisonLocked(fmt.Errorf("fsync %s: %w", l.active.path, err))
		return l.poisoned
	}
	l.lastSync, l.unsynced = time.Now(), 0
	frames := l.written
	if len(l.hidden) > 0 {
		frames = append(append([]frameLoc(nil), l.hidden...), l.written...)
	}
	if err := l.verifyLocked(frames); err != nil {
		return err
	}
	if err := l.releaseHWMLocked(); err != nil {
		return err
	}
	idx, rolled := l.active.idx, false
	if l.full {
		if err := l.rollLocked(); err != nil {
			return err
		}
		rolled = true
	}
	l.advanceLocked(idx, frames, rolled)
	return nil
}

// verifyLocked reads back the raw bytes of frames and checks each CRC and
// header against what was written.
func (l *partitionLog) verifyLocked(frames []frameLoc) error {
	start, end := frames[0].pos, frames[len(frames)-1].endPos()
	bp := readBackPool.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= readBackPooledMaxBytes {
			readBackPool.Put(bp)
		}
	}()
	if int64(cap(*bp)) < end-start {
		*bp = make([]byte, end-start)
	}
	raw := (*bp)[:end-start]
	if err := readFull(l.file, raw, start); err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if l.cfg.hooks != nil && l.cfg.hooks.readBack != nil {
		l.cfg.hooks.readBack(raw)
	}
	for _, f := range frames {
		h, err := verifyFrame(raw[f.pos-start : f.endPos()-start])
		if err == nil && h != f.hdr {
			err = fmt.Errorf("%w: header differs from the one written", ErrCorruptFrame)
		}
		if err != nil {
			return fmt.Errorf("read back frame at %d of %s: %w", f.pos, l.active.path, err)
		}
	}
	return nil
}

// advanceLocked indexes the verified frames and moves the high watermark
// past them, then wakes waiters. A frame cache entry is made for each frame
// kept for write-through.
func (l *partitionLog) advanceLocked(idx *sparseIndex, frames []frameLoc, rolled bool) {
	for _, f := range frames {
		idx.add(f.pos, f.hdr)
	}
	if !rolled {
		l.hwmPos = l.writePos
	}
	l.hwm.Store(frames[len(frames)-1].hdr.end())
	for _, f := range frames {
		if f.inner == nil {
			continue
		}
		if recs, err := parseRecords(f.inner, f.hdr.base, int(f.hdr.count)); err == nil {
			l.cache.put(&decodedFrame{base: f.hdr.base, recs: recs, bytes: len(f.inner)})
		}
	}
	l.dropPendingFramesLocked()
	l.readSinceWrite.Store(false)
	l.cfg.notify()
}

// rollbackLocked leaves nothing above the high watermark: the buffer and the
// unverified frames are dropped and the active segment is cut back to the
// end of the last visible frame (the truncate fsynced). A failed truncate
// poisons the log: the cut frames might come back.
func (l *partitionLog) rollbackLocked() {
	l.buf.reset()
	l.dropPendingFramesLocked()
	l.next = max(l.hwm.Load(), l.active.base)
	l.unsynced = 0
	size, err := l.file.Size()
	if err != nil || size > l.hwmPos {
		if err := l.truncateLocked(l.hwmPos); err != nil {
			l.poisonLocked(err)
		}
	}
	l.writePos = l.hwmPos
	l.active.sizeBytes = l.writePos
	l.full = l.writePos >= l.cfg.segMax
}

// dropPendingFramesLocked forgets the frames above the high watermark,
// keeping the written slice's storage for the next commit.
func (l *partitionLog) dropPendingFramesLocked() {
	l.hidden = nil
	clear(l.written)
	l.written = l.written[:0]
}

func (l *partitionLog) truncateLocked(pos int64) error {
	if err := l.file.Truncate(pos); err != nil {
		return fmt.Errorf("truncate %s to %d: %w", l.active.path, pos, err)
	}
	if err := l.file.Sync(); err != nil {
		return fmt.Errorf("fsync truncated %s: %w", l.active.path, err)
	}
	return nil
}

// rollIfDueLocked seals the active segment before a write when it is full
// or its oldest record is older than the roll age, provided it holds nothing
// above the high watermark.
func (l *partitionLog) rollIfDueLocked() error {
	if len(l.hidden) > 0 || len(l.written) > 0 || l.hwmPos == 0 {
		return nil
	}
	if !l.full && !l.rollAgeReachedLocked(l.cfg.now()) {
		return nil
	}
	return l.rollLocked()
}

// rollAgeReachedLocked: the active segment's oldest record is older than the
// roll age (the topic's retention).
func (l *partitionLog) rollAgeReachedLocked(now time.Time) bool {
	age := time.Duration(l.retention.Load())
	return age > 0 && !l.active.firstWrite.IsZero() && now.Sub(l.active.firstWrite) >= age
}

// rollLocked seals the active segment and starts a new one named by the
// first offset not written yet. The sealed segment was fsynced by the pass
// that filled it; the successor's name is made durable before it is used.
func (l *partitionLog) rollLocked() error {
	base := l.next - int64(l.buf.count())
	path := segmentPath(l.cfg.dir, base)
	f, err := createSegment(l.cfg.fsys, path)
	if err != nil {
		return fmt.Errorf("roll: %w", err)
	}
	if err := l.cfg.fsys.SyncDir(l.cfg.dir); err != nil {
		_ = f.Close()
		_ = l.cfg.fsys.Remove(path)
		return fmt.Errorf("roll: sync %s: %w", l.cfg.dir, err)
	}
	old, oldFile := l.active, l.file
	old.sizeBytes = l.writePos
	seg := &segment{base: base, path: path, idx: newSparseIndex(base)}
	l.segMu.Lock()
	l.segs = append(l.segs, seg)
	l.hot.adopt(old.base, oldFile, old.idx)
	old.idx = nil
	l.active, l.file = seg, f
	l.segMu.Unlock()
	l.hwmPos, l.writePos, l.unsynced, l.full = 0, 0, 0, false
	return nil
}

package segmentlog

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// LogStats reports the partition's storage without stamping use (spec 4.6,
// 4.12: a describe is a peek). An open log answers from memory; a closed one
// from its directory listing, its segments' stat and its hwm file, under the
// topic guard and without opening it. A closed log whose hwm file holds no
// boundary (a crash left it) has its active segment scanned read-only for
// the CRC-verified tail, the boundary the next open would settle on; nothing
// is written. For a closed log NextOffset is the high watermark: a hidden
// tail is not counted.
func (s *Store) LogStats(ref domain.PartitionRef) (ports.LogStats, error) {
	if err := validateRef(ref); err != nil {
		return ports.LogStats{}, err
	}
	sl := s.slotFor(ref)
	if l := sl.log.Load(); l != nil && sl.topic.serves(ref.TopicID) {
		if st, ok := l.stats(); ok {
			return st, nil
		}
	}
	return s.statsClosed(sl, ref.TopicID)
}

// stats reads an open log's numbers under its write lock (so it may wait
// for one commit). ok is false once the log is shut.
func (l *partitionLog) stats() (ports.LogStats, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shut {
		return ports.LogStats{}, false
	}
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	b := l.bounds()
	st := ports.LogStats{
		Segments: len(l.segs), OldestOffset: b.Oldest, NextOffset: l.next, HighWatermark: b.HighWatermark,
	}
	for _, seg := range l.segs {
		st.SizeBytes += seg.sizeBytes
	}
	if oldest := l.segs[0]; oldest.sizeBytes > 0 {
		st.OldestSegmentAt = oldest.lastWrite
	}
	return st, true
}

// statsClosed answers LogStats under the topic guard, so it never reads a
// half-written hwm file nor races an open, a close or a Remove.
func (s *Store) statsClosed(sl *slot, id domain.TopicID) (ports.LogStats, error) {
	t := sl.topic
	t.guard.Lock()
	defer t.guard.Unlock()
	if s.closed.Load() {
		return ports.LogStats{}, errStoreClosed
	}
	if l := sl.log.Load(); l != nil && t.serves(id) {
		if st, ok := l.stats(); ok {
			return st, nil
		}
	}
	if err := s.loadMarkerLocked(t); err != nil {
		return ports.LogStats{}, err
	}
	if id != "" && t.retired[id] {
		return ports.LogStats{}, staleError(t.name, id)
	}
	if cur := *t.id.Load(); id != "" && cur != "" && cur != id {
		return ports.LogStats{}, nil // another incarnation's directory holds nothing of id's
	}
	if c := sl.closedStats.Load(); c != nil {
		return *c, nil
	}
	st, err := statClosedDir(s.opts.FS, sl.dir)
	if err != nil {
		return ports.LogStats{}, fmt.Errorf("segmentlog: stats of %s/%d: %w", t.name, sl.key.partition, err)
	}
	if sl.log.Load() == nil { // the guard keeps an open out until we return
		sl.closedStats.Store(&st)
	}
	return st, nil
}

// statClosedDir computes a closed partition's numbers from dir: the
// segments' names and stat, then the boundary from the hwm file or, without
// one, from a read-only scan of the active segment.
func statClosedDir(fsys vfs.FS, dir string) (ports.LogStats, error) {
	if _, err := fsys.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return ports.LogStats{}, nil
	}
	bases, err := listSegments(fsys, dir)
	if err != nil {
		return ports.LogStats{}, err
	}
	st := ports.LogStats{Segments: len(bases)}
	for i, base := range bases {
		info, err := fsys.Stat(segmentPath(dir, base))
		if err != nil {
			return ports.LogStats{}, fmt.Errorf("stat segment: %w", err)
		}
		st.SizeBytes += info.Size()
		if i == 0 && info.Size() > 0 {
			st.OldestSegmentAt = info.ModTime()
		}
	}
	hwm, size, err := readHWMFile(fsys, filepath.Join(dir, hwmFileName))
	if err != nil {
		return ports.LogStats{}, err
	}
	if size != hwmFileBytes {
		if hwm, err = scanClosedTail(fsys, dir, bases); err != nil {
			return ports.LogStats{}, err
		}
	}
	st.HighWatermark, st.NextOffset, st.OldestOffset = hwm, hwm, hwm
	if len(bases) > 0 {
		st.OldestOffset = min(bases[0], hwm)
	}
	return st, nil
}

// scanClosedTail returns the CRC-verified tail of a closed log's active
// segment, read through a read-only handle: no truncation, no fsync.
func scanClosedTail(fsys vfs.FS, dir string, bases []int64) (int64, error) {
	if len(bases) == 0 {
		return 0, nil // an open would create segment 0
	}
	base := bases[len(bases)-1]
	f, err := fsys.Open(segmentPath(dir, base))
	if err != nil {
		return 0, fmt.Errorf("open active segment read-only: %w", err)
	}
	defer f.Close()
	scan, err := scanSegment(f, base)
	if err != nil {
		return 0, fmt.Errorf("scan %s: %w", f.Name(), err)
	}
	return scan.tail, nil
}

// PeekCommittedAt returns the commit time (Unix ms) of the record at offset
// when the partition's log is open, without stamping use, so a metrics
// scrape never keeps a log from idle eviction. ok is false for a closed
// log, another incarnation, or an offset with nothing readable.
func (s *Store) PeekCommittedAt(ref domain.PartitionRef, offset int64) (int64, bool) {
	if validateRef(ref) != nil || offset < 0 {
		return 0, false
	}
	sl := s.slotFor(ref)
	l := sl.log.Load()
	if l == nil || !sl.topic.serves(ref.TopicID) {
		return 0, false
	}
	recs, err := l.read(offset, 1, 1)
	if err != nil || len(recs) == 0 {
		return 0, false
	}
	return recs[0].CommittedAtMs, true
}

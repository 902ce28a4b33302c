package segmentlog

import (
	"errors"
	"fmt"
	"sort"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
)

// read returns up to maxRecords records from offset from on, stopping once
// their keys and payloads pass maxBytes (maxBytes <= 0: no byte bound; at
// least one record is returned), contiguous and below the high watermark.
// Records share the frame's decode buffer: callers must not modify them.
func (l *partitionLog) read(from int64, maxRecords, maxBytes int) ([]domain.Record, error) {
	if l.closed.Load() {
		return nil, errLogClosed
	}
	hwm := l.hwm.Load()
	if from >= hwm {
		return nil, fmt.Errorf("read %s at %d, high watermark %d: %w", l.cfg.dir, from, hwm, domain.ErrOffsetNotWritten)
	}
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if l.closed.Load() {
		return nil, errLogClosed
	}
	if oldest := l.oldest.Load(); from < oldest {
		return nil, fmt.Errorf("read %s at %d, oldest retained %d: %w", l.cfg.dir, from, oldest, domain.ErrOffsetGone)
	}
	l.readSinceWrite.Store(true)
	maxRecords = max(1, maxRecords)
	out := make([]domain.Record, 0, min(int64(maxRecords), hwm-from, readPreallocRecords))
	size := 0
	for off := from; off < hwm && len(out) < maxRecords; {
		fr, err := l.frameAtLocked(off)
		if err != nil {
			if len(out) > 0 {
				break // serve what precedes the damage; the next read reports it
			}
			return nil, l.readError(off, err)
		}
		for _, r := range fr.recs[off-fr.base:] {
			n := len(r.Key) + len(r.Payload)
			if r.Offset >= hwm || len(out) == maxRecords || (len(out) > 0 && maxBytes > 0 && size+n > maxBytes) {
				return out, nil
			}
			out = append(out, r)
			size += n
		}
		off = fr.end()
	}
	return out, nil
}

func (l *partitionLog) readError(off int64, err error) error {
	switch {
	case errors.Is(err, errGap):
		return fmt.Errorf("read %s at %d: %w", l.cfg.dir, off, domain.ErrOffsetGone)
	case errors.Is(err, ErrCorruptFrame):
		return fmt.Errorf("read %s at %d: %w (%w)", l.cfg.dir, off, domain.ErrRecordCorrupt, err)
	}
	return fmt.Errorf("read %s at %d: %w", l.cfg.dir, off, err)
}

// frameAtLocked returns the decoded frame holding off: from the frame cache,
// else located through the segment's sparse index, read and verified. The
// caller holds segMu shared.
func (l *partitionLog) frameAtLocked(off int64) (*decodedFrame, error) {
	if fr := l.cache.get(off); fr != nil {
		return fr, nil
	}
	i := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > off }) - 1
	if i < 0 {
		return nil, errGap
	}
	var f vfs.File
	var idx *sparseIndex
	if i == len(l.segs)-1 {
		f, idx = l.file, l.segs[i].idx
	} else {
		hh, err := l.hot.acquire(l.segs[i], -1)
		if err != nil {
			return nil, err
		}
		defer l.hot.release(hh)
		f, idx = hh.file, hh.idx
	}
	pos, h, err := locate(f, idx, off)
	if err != nil {
		return nil, err
	}
	if fr := l.cache.get(h.base); fr != nil {
		return fr, nil
	}
	raw := make([]byte, h.frameBytes())
	if err := readFull(f, raw, pos); err != nil {
		return nil, err
	}
	fr, err := decodeFrame(raw, l.cfg.codecs)
	if err != nil {
		return nil, fmt.Errorf("frame at %d: %w", pos, err)
	}
	l.cache.put(fr)
	return fr, nil
}

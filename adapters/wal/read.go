package wal

import (
	"fmt"
	"sort"

	"github.com/narad/narad/ports"
)

// ReadFrom returns up to limit durable entries with Seq >= from, in sequence
// order and dense, read back from the segment files with every CRC checked.
// Nothing at or past DurableNext is returned. A from below the oldest kept
// segment (compacted away) starts at the oldest kept record. The returned
// slices belong to the caller. A frame that fails its checks returns an error
// wrapping ErrCorrupt; an undecodable record one wrapping ErrRecordFormat.
func (w *WAL) ReadFrom(from uint64, limit int) ([]ports.WALEntry, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, w.errClosed("read")
	}
	durable, activeEnd := w.durableNext, w.activeEnd
	segs := append([]*segment(nil), w.segments...)
	w.mu.Unlock()

	from = max(from, segs[0].base)
	if limit <= 0 || from >= durable {
		return nil, nil
	}
	out := make([]ports.WALEntry, 0, min(uint64(limit), durable-from, readPreallocEntries))
	next := from
	i := sort.Search(len(segs), func(i int) bool { return segs[i].base > from }) - 1
	for ; i < len(segs) && len(out) < limit && next < durable; i++ {
		var err error
		end := int64(-1) // a sealed segment ends at its file size
		if i == len(segs)-1 {
			end = activeEnd
		}
		if out, err = w.readSegment(segs[i], end, next, durable, limit, out); err != nil {
			return nil, fmt.Errorf("wal: read from %d: %w", from, err)
		}
		if n := len(out); n > 0 {
			next = out[n-1].Seq + 1
		}
	}
	if n := len(out); n > 0 && out[n-1].Seq != from+uint64(n)-1 || n == 0 && next < durable {
		return nil, fmt.Errorf("wal: read from %d: durable sequences missing from the segments: %w", from, ErrCorrupt)
	}
	return out, nil
}

// readSegment appends to out the entries of seg from sequence from on,
// stopping at durable, at limit entries or at the segment's data end: size,
// or the file size when size is negative (a sealed segment, trimmed to its
// data). The active segment's size is its durable data end, never the file
// size: a prepared file is longer than its data.
func (w *WAL) readSegment(seg *segment, size int64, from, durable uint64, limit int, out []ports.WALEntry) ([]ports.WALEntry, error) {
	f, err := w.opts.FS.Open(seg.path)
	if err != nil {
		return out, fmt.Errorf("open segment: %w", err)
	}
	defer f.Close()
	if size < 0 {
		if size, err = f.Size(); err != nil {
			return out, fmt.Errorf("size of %s: %w", seg.path, err)
		}
	}
	pos := seg.seek(from)
	r := newPooledSegReader(f, size)
	defer r.release()
	for seq, off := pos.seq, pos.off; seq < durable && len(out) < limit && off < size; seq++ {
		h, payload, fault, err := r.frameAt(off)
		if err != nil {
			return out, fmt.Errorf("read %s at byte %d: %w", seg.path, off, err)
		}
		if fault == faultNone && h.seq != seq {
			fault = faultSeq
		}
		if fault != faultNone {
			return out, &CorruptionError{File: seg.path, Offset: off,
				Reason: fmt.Sprintf("%s reading sequence %d", fault, seq)}
		}
		seg.note(seq, off)
		if seq >= from {
			rec, err := decodeRecord(payload)
			if err != nil {
				return out, fmt.Errorf("sequence %d in %s at byte %d: %w", seq, seg.path, off, err)
			}
			out = append(out, ports.WALEntry{Seq: seq, Record: rec})
		}
		off += h.frameBytes()
	}
	return out, nil
}

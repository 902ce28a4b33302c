package wal

import (
	"errors"
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
// A read that finds a segment compaction removed after it listed it starts
// over from the oldest kept record.
func (w *WAL) ReadFrom(from uint64, limit int) ([]ports.WALEntry, error) {
	for {
		out, err := w.readFrom(from, limit)
		if !errors.Is(err, errSegmentGone) {
			return out, err
		}
	}
}

func (w *WAL) readFrom(from uint64, limit int) ([]ports.WALEntry, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, w.errClosed("read")
	}
	durable, activeEnd := w.durableNext, w.activeEnd
	from = max(from, w.segments[0].base)
	i := sort.Search(len(w.segments), func(i int) bool { return w.segments[i].base > from }) - 1
	// No copy: appends write past this view's length and compaction only
	// reslices, so the view's elements never change.
	segs := w.segments[i:]
	w.mu.Unlock()

	if limit <= 0 || from >= durable {
		return nil, nil
	}
	out := make([]ports.WALEntry, 0, min(uint64(limit), durable-from, readPreallocEntries))
	next := from
	for i := 0; i < len(segs) && len(out) < limit && next < durable; i++ {
		end := activeEnd
		if i < len(segs)-1 {
			end = segs[i].end // sealed: set before its successor was listed
		}
		var err error
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
// stopping at durable, at limit entries or at size, the segment's data end
// (durable data end of the active segment, data end of a sealed one; never
// the file size, which a prepared segment exceeds). It reads through the
// cached descriptor of the segment.
func (w *WAL) readSegment(seg *segment, size int64, from, durable uint64, limit int, out []ports.WALEntry) ([]ports.WALEntry, error) {
	h, err := w.acquireRead(seg)
	if err != nil {
		return out, err
	}
	defer w.releaseRead(h)
	pos := seg.seek(from)
	r := newPooledSegReader(h.f, size)
	defer r.release()
	seq, off := pos.seq, pos.off
	for ; seq < durable && len(out) < limit && off < size; seq++ {
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
	seg.noteAfter(seq, off)
	return out, nil
}

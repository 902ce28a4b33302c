package segmentlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/narad/narad/adapters/vfs"
)

// errGap marks an offset no frame holds (reaped, never written in this
// segment, or lost to corruption); reads answer domain.ErrOffsetGone.
var errGap = errors.New("segmentlog: offset in a gap")

// anchor points at the start of a frame.
type anchor struct {
	off       int64 // the frame's base offset
	pos       int64 // the frame's position in the segment
	gapBefore bool  // the frames before it do not run into it
}

// sparseIndex maps offsets to positions in one segment: one anchor per
// ~32 KiB of frames, the stride doubling to keep at most ~2,048 anchors, and
// an anchor after every gap so a walk never crosses damaged bytes. Lookups
// walk 27-byte headers forward from the nearest anchor. Only verified frames
// below the high watermark are ever added, so the index never names bytes a
// failed commit cuts away.
type sparseIndex struct {
	mu      sync.RWMutex
	anchors []anchor
	stride  int64
	endPos  int64 // end of the last indexed frame
	endOff  int64 // offset after the last indexed frame
	started bool
}

func newSparseIndex(base int64) *sparseIndex {
	return &sparseIndex{stride: indexAnchorStrideBytes, endOff: base}
}

// add indexes the frame h at pos; frames come in position order.
func (x *sparseIndex) add(pos int64, h frameHeader) {
	x.mu.Lock()
	defer x.mu.Unlock()
	gap := h.base != x.endOff || (x.started && pos != x.endPos)
	last := len(x.anchors) - 1
	if last < 0 || gap || pos-x.anchors[last].pos >= x.stride {
		x.anchors = append(x.anchors, anchor{off: h.base, pos: pos, gapBefore: gap})
	}
	x.started = true
	x.endPos = pos + h.frameBytes()
	x.endOff = h.end()
	if len(x.anchors) > indexAnchorsMax {
		x.thin()
	}
}

// thin doubles the stride and drops the anchors it no longer needs; anchors
// after a gap always stay.
func (x *sparseIndex) thin() {
	x.stride *= 2
	kept := x.anchors[:1]
	for _, a := range x.anchors[1:] {
		if a.gapBefore || a.pos-kept[len(kept)-1].pos >= x.stride {
			kept = append(kept, a)
		}
	}
	clear(x.anchors[len(kept):])
	x.anchors = kept
}

// seek returns where to start walking for off and where the walk must stop.
func (x *sparseIndex) seek(off int64) (start, limit int64, ok bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if off >= x.endOff {
		return 0, 0, false
	}
	i := sort.Search(len(x.anchors), func(i int) bool { return x.anchors[i].off > off }) - 1
	if i < 0 {
		return 0, 0, false
	}
	limit = x.endPos
	if i+1 < len(x.anchors) {
		limit = x.anchors[i+1].pos
	}
	return x.anchors[i].pos, limit, true
}

// locate finds the frame holding off by walking headers from the nearest
// anchor. It answers errGap when no frame holds off and ErrCorruptFrame when
// a header on the way does not parse.
func locate(f vfs.File, x *sparseIndex, off int64) (int64, frameHeader, error) {
	pos, limit, ok := x.seek(off)
	if !ok {
		return 0, frameHeader{}, errGap
	}
	var hb [frameHeaderBytes]byte
	for pos < limit {
		if err := readFull(f, hb[:], pos); err != nil {
			return 0, frameHeader{}, err
		}
		h, err := parseFrameHeader(hb[:])
		if err != nil {
			return 0, frameHeader{}, fmt.Errorf("header at %d: %w", pos, err)
		}
		if off < h.base {
			return 0, frameHeader{}, errGap
		}
		if off < h.end() {
			return pos, h, nil
		}
		pos += h.frameBytes()
	}
	return 0, frameHeader{}, errGap
}

// buildIndex rebuilds a sealed segment's index from its headers. A header
// that does not parse sends it looking for the next frame that passes its
// CRC; the bytes in between become a gap. Frame payloads are not checked
// here: the read that lands on a damaged frame finds it.
func buildIndex(f vfs.File, base, size int64) (*sparseIndex, error) {
	x := newSparseIndex(base)
	var hb [frameHeaderBytes]byte
	pos, expected, lastPos := int64(0), base, int64(-1)
	for pos+frameHeaderBytes <= size {
		if err := readFull(f, hb[:], pos); err != nil {
			return nil, err
		}
		if h, err := parseFrameHeader(hb[:]); err == nil && pos+h.frameBytes() <= size && h.base >= expected {
			x.add(pos, h)
			lastPos, pos, expected = pos, pos+h.frameBytes(), h.end()
			continue
		}
		from := pos + 1
		if lastPos >= 0 {
			from = lastPos + frameHeaderBytes // the previous header's size may be what is wrong
		}
		next, _, found, err := findFrame(f, from, size, expected)
		if err != nil || !found {
			return x, err
		}
		pos = next
	}
	return x, nil
}

// findFrame returns the first position in [from, limit) holding a whole
// frame that passes its CRC and starts at or after minBase.
func findFrame(f vfs.File, from, limit, minBase int64) (int64, frameHeader, bool, error) {
	magic := []byte{frameMagic0, frameMagic1}
	chunk := make([]byte, resyncChunkBytes)
	for p := from; p+frameHeaderBytes <= limit; {
		n := min(int64(len(chunk)), limit-p)
		if err := readFull(f, chunk[:n], p); err != nil {
			return 0, frameHeader{}, false, err
		}
		for i := 0; ; i++ {
			j := bytes.Index(chunk[i:n], magic)
			if j < 0 {
				break
			}
			i += j
			h, ok, err := frameAt(f, p+int64(i), limit, minBase)
			if err != nil || ok {
				return p + int64(i), h, ok, err
			}
		}
		if n < 2 {
			break
		}
		p += n - 1 // a magic split across two chunks is found by the next one
	}
	return 0, frameHeader{}, false, nil
}

// frameAt reports whether a valid frame starting at or after minBase sits at
// pos, wholly below limit.
func frameAt(f vfs.File, pos, limit, minBase int64) (frameHeader, bool, error) {
	if pos+frameHeaderBytes > limit {
		return frameHeader{}, false, nil
	}
	var hb [frameHeaderBytes]byte
	if err := readFull(f, hb[:], pos); err != nil {
		return frameHeader{}, false, err
	}
	h, err := parseFrameHeader(hb[:])
	if err != nil || h.base < minBase || pos+h.frameBytes() > limit {
		return frameHeader{}, false, nil
	}
	raw := make([]byte, h.frameBytes())
	if err := readFull(f, raw, pos); err != nil {
		return frameHeader{}, false, err
	}
	if _, err := verifyFrame(raw); err != nil {
		return frameHeader{}, false, nil
	}
	return h, true, nil
}

// readFull reads len(b) bytes at off; a short read is io.ErrUnexpectedEOF.
func readFull(f vfs.File, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read %s at %d: %w", f.Name(), off, err)
}

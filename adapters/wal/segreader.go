package wal

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// errBeyondEnd: a read asked for bytes past the reader's size limit.
var errBeyondEnd = errors.New("wal: read beyond the end of the segment")

// segReader reads frames from a segment through a read-ahead window. It never
// allocates more than one window or one frame (at most 20 B + 16 MiB), and
// never more than the bytes left before size.
type segReader struct {
	r      io.ReaderAt
	size   int64
	buf    []byte
	bufOff int64
	window int64 // the next refill's size: starts small, grows 4x per refill
}

// windowPool recycles read windows between ReadFrom calls.
var windowPool = sync.Pool{New: func() any { return new([]byte) }}

func newSegReader(r io.ReaderAt, size int64) *segReader {
	return &segReader{r: r, size: size, window: readWindowMinBytes}
}

// newPooledSegReader is newSegReader with a recycled window; call release
// when done with every slice it returned.
func newPooledSegReader(r io.ReaderAt, size int64) *segReader {
	s := newSegReader(r, size)
	s.buf = (*windowPool.Get().(*[]byte))[:0]
	return s
}

// release recycles the window unless a big frame grew it past the default.
func (s *segReader) release() {
	if cap(s.buf) <= readWindowBytes {
		buf := s.buf[:0]
		windowPool.Put(&buf)
	}
	s.buf = nil
}

// bytesAt returns n bytes at off, valid until the next call.
func (s *segReader) bytesAt(off int64, n int) ([]byte, error) {
	if off < 0 || n < 0 || off+int64(n) > s.size {
		return nil, errBeyondEnd
	}
	if off >= s.bufOff && off+int64(n) <= s.bufOff+int64(len(s.buf)) {
		start := off - s.bufOff
		return s.buf[start : start+int64(n)], nil
	}
	want := max(int64(n), s.window)
	want = min(want, s.size-off)
	s.window = min(4*s.window, readWindowBytes)
	if int64(cap(s.buf)) < want {
		s.buf = make([]byte, want)
	}
	s.buf = s.buf[:want]
	got, err := s.r.ReadAt(s.buf, off)
	if int64(got) < want {
		s.buf = s.buf[:0]
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("read %d bytes at %d: %w", want, off, err)
	}
	s.bufOff = off
	return s.buf[:n], nil
}

// frameAt reads and checks the frame at off: magic, length, completeness and
// CRC (not the sequence). A fault is a property of the bytes; err is an I/O
// error.
func (s *segReader) frameAt(off int64) (frameHeader, []byte, frameFault, error) {
	hb, err := s.bytesAt(off, frameHeaderBytes)
	if errors.Is(err, errBeyondEnd) {
		return frameHeader{}, nil, faultTruncated, nil
	}
	if err != nil {
		return frameHeader{}, nil, faultNone, err
	}
	h, fault := parseFrameHeader(hb)
	if fault != faultNone {
		return h, nil, fault, nil
	}
	if off+h.frameBytes() > s.size {
		return h, nil, faultTruncated, nil
	}
	fb, err := s.bytesAt(off, int(h.frameBytes()))
	if err != nil {
		return h, nil, faultNone, err
	}
	payload := fb[frameHeaderBytes:]
	if crc32.ChecksumIEEE(payload) != h.crc {
		return h, nil, faultCRC, nil
	}
	return h, payload, faultNone, nil
}

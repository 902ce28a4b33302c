package schedulefile

import (
	"errors"
	"fmt"
	"io"
)

// scanner reads a file's frames in order through a window of at most
// readWindowBytes: Open neither holds a whole file nor reads once per frame.
type scanner struct {
	r      io.ReaderAt
	size   int64  // the file's length
	buf    []byte // the window's storage
	win    []byte // file bytes from winOff, within buf
	winOff int64
	pos    int64 // offset of the next frame
}

func newScanner(r io.ReaderAt, size int64) *scanner {
	return &scanner{r: r, size: size}
}

// next returns the frame at the scan position, its offset and length; ok
// is false where the whole frames end (a frame that is short, fails its
// checksum, is over the cap or does not decode exactly). The frame's
// slices are valid until the next call.
func (s *scanner) next() (f frame, pos int64, n int, ok bool, err error) {
	if err := s.fill(); err != nil {
		return f, s.pos, 0, false, err
	}
	f, n, ok = decodeFrame(s.win[s.pos-s.winOff:])
	pos = s.pos
	if ok {
		s.pos += int64(n)
	}
	return f, pos, n, ok, nil
}

// fill makes the window hold the bytes from the scan position up to the
// end of the file or frameMaxBytes of them, whichever is fewer.
func (s *scanner) fill() error {
	start := int(s.pos - s.winOff)
	want := min(s.size-s.pos, frameMaxBytes)
	if int64(len(s.win)-start) >= want {
		return nil
	}
	if s.buf == nil {
		s.buf = make([]byte, min(s.size, readWindowBytes))
	}
	kept := copy(s.buf, s.win[start:])
	from := s.pos + int64(kept)
	toRead := int(min(int64(len(s.buf)-kept), s.size-from))
	n, err := s.r.ReadAt(s.buf[kept:kept+toRead], from)
	if n < toRead {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // shorter than its size said
		}
		return fmt.Errorf("read %d bytes at %d: %w", toRead, from, err)
	}
	s.win, s.winOff = s.buf[:kept+n], s.pos
	return nil
}

// tally is what a file's frames acknowledge, taken frame by frame in file
// order.
type tally struct {
	records []Entry // acknowledged record frames, by ordinal
	batch   []Entry // record frames since the last commit
	fired   bitset  // ordinals named by accepted fired frames
	good    int64   // end of the last whole commit or fired frame
}

// add takes the frame f found at pos, n bytes long; false when it breaks
// the protocol, so the file's torn tail starts at or before it.
func (t *tally) add(f frame, pos int64, n int) bool {
	switch f.kind {
	case kindRecord:
		ordinal := len(t.records) + len(t.batch)
		if int64(ordinal) >= recordsMax {
			return false
		}
		t.batch = append(t.batch, Entry{Ordinal: uint32(ordinal), DeliverAtMs: f.deliverAtMs, Pos: pos, Size: uint32(n)})
		return true // not acknowledged before its commit: good stays
	case kindCommit:
		if int64(f.count) != int64(len(t.batch)) {
			return false
		}
		t.records = append(t.records, t.batch...)
		t.batch = t.batch[:0]
	case kindFired:
		if len(t.batch) > 0 || int64(f.maxOrdinal) >= int64(len(t.records)) {
			return false
		}
		t.fired.grow(len(t.records))
		for o := range f.firedOrdinals() {
			t.fired.set(o)
		}
	default:
		return false
	}
	t.good = pos + int64(n)
	return true
}

// pending is the acknowledged records not fired, in file order.
func (t *tally) pending() []Entry {
	out := make([]Entry, 0, len(t.records))
	for _, e := range t.records {
		if !t.fired.has(e.Ordinal) {
			out = append(out, e)
		}
	}
	return out
}

// scanFile reads the frames of r, size bytes long, and tallies them up to
// the first frame that is not whole or breaks the protocol.
func scanFile(r io.ReaderAt, size int64) (*tally, error) {
	s, t := newScanner(r, size), &tally{}
	for {
		f, pos, n, ok, err := s.next()
		if err != nil {
			return nil, err
		}
		if !ok || !t.add(f, pos, n) {
			return t, nil
		}
	}
}

// bitset is a set of ordinals.
type bitset []uint64

// grow makes room for ordinals below n.
func (s *bitset) grow(n int) {
	if words := (n + 63) / 64; words > len(*s) {
		*s = append(*s, make([]uint64, words-len(*s))...)
	}
}

func (s bitset) has(o uint32) bool {
	w := int(o / 64)
	return w < len(s) && s[w]&(1<<(o%64)) != 0
}

// set adds o, which must be below the grown size, and reports whether it
// was new.
func (s bitset) set(o uint32) bool {
	w, bit := o/64, uint64(1)<<(o%64)
	if s[w]&bit != 0 {
		return false
	}
	s[w] |= bit
	return true
}

package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// scanResult is what scanning one segment found.
type scanResult struct {
	// next is the sequence after the last valid frame (base when empty).
	next uint64
	// validEnd is the end offset of the last valid frame.
	validEnd int64
	// count is the number of valid frames.
	count int
	// index is a sparse (seq, offset) index of the valid frames.
	index []indexEntry
	// torn reports bytes after validEnd that are a torn tail to truncate.
	torn bool
	// tornFault says what the first bad byte looked like, when torn.
	tornFault frameFault
	// prepLimit is the write limit when the (last) segment is prepared; the
	// frames then end at validEnd and zeros follow up to the limit.
	prepLimit int64
	// tornEnd is the end of the torn bytes of a prepared segment (the last
	// non-zero byte before the limit), when torn.
	tornEnd int64
}

// scanSegment checks every frame of the segment name, whose frames must carry
// dense sequences starting at base. Damage is a torn tail only when last is
// set and no complete valid frame follows it; any other damage returns a
// *CorruptionError naming the file and the byte offset. I/O errors are
// returned wrapped.
func scanSegment(r io.ReaderAt, size int64, name string, base uint64, last bool) (scanResult, error) {
	s := newSegReader(r, size)
	res := scanResult{next: base}
	for off := int64(0); off < size; {
		h, _, fault, err := s.frameAt(off)
		if err != nil {
			return res, fmt.Errorf("scan %s at byte %d: %w", name, off, err)
		}
		if fault == faultNone && h.seq != res.next {
			fault = faultSeq
		}
		if fault != faultNone {
			return res.badRegion(r, size, name, off, last, fault)
		}
		res.index = appendIndex(res.index, h.seq, off)
		off += h.frameBytes()
		res.next++
		res.count++
		res.validEnd = off
	}
	return res, nil
}

// badRegion decides whether the bad bytes at off are a torn tail.
func (res scanResult) badRegion(r io.ReaderAt, size int64, name string, off int64, last bool, fault frameFault) (scanResult, error) {
	if !last {
		return res, &CorruptionError{File: name, Offset: off,
			Reason: fault.String() + " in a sealed segment (expected sequence " + fmt.Sprint(res.next) + ")"}
	}
	limit, prepared, err := preparedLimit(r, size)
	if err != nil {
		return res, fmt.Errorf("scan %s: %w", name, err)
	}
	if prepared && off <= limit {
		return res.preparedTail(r, limit, name, off, fault)
	}
	at, found, err := findValidFrame(r, size, off+1, size, res.next)
	if err != nil {
		return res, fmt.Errorf("scan %s after byte %d: %w", name, off, err)
	}
	if found {
		return res, &CorruptionError{File: name, Offset: off,
			Reason: fmt.Sprintf("%s followed by a valid frame at byte %d", fault, at)}
	}
	res.torn = true
	res.tornFault = fault
	return res, nil
}

// preparedTail decides what follows the last frame (at off) of a prepared
// last segment: all zeros up to the limit is its clean data end; other bytes
// are a torn run, accepted even with valid frames among them as long as none
// starts more than 16 MiB after off (spec 2.7). Anything else is corruption.
func (res scanResult) preparedTail(r io.ReaderAt, limit int64, name string, off int64, fault frameFault) (scanResult, error) {
	res.prepLimit = limit
	junkEnd, err := nonZeroEnd(r, off, limit)
	if err != nil || junkEnd == off {
		return res, err
	}
	if junkEnd > off+preparedTornWindowBytes {
		at, found, err := findValidFrame(r, limit, off+preparedTornWindowBytes, junkEnd, res.next)
		if err != nil {
			return res, fmt.Errorf("scan %s after byte %d: %w", name, off, err)
		}
		if found {
			return res, &CorruptionError{File: name, Offset: off, Reason: fmt.Sprintf(
				"%s followed by a valid frame at byte %d, beyond the torn-run window of a prepared segment", fault, at)}
		}
	}
	res.torn, res.tornFault, res.tornEnd = true, fault, junkEnd
	return res, nil
}

// findValidFrame searches positions [from, to) of a file of size bytes for a
// complete frame with a good CRC and a sequence >= minSeq: magic search in
// 4 KiB chunks with a 3-byte overlap, so a magic straddling two chunks is
// seen once.
func findValidFrame(r io.ReaderAt, size, from, to int64, minSeq uint64) (int64, bool, error) {
	var magic [4]byte
	binary.BigEndian.PutUint32(magic[:], frameMagic)
	chunk := make([]byte, magicScanChunkBytes)
	cand := newSegReader(r, size)
	end := min(size, to+int64(len(magic))-1) // bytes a magic starting before to may use
	for pos := from; pos+int64(len(magic)) <= end; {
		n := int(min(int64(len(chunk)), end-pos))
		if got, err := r.ReadAt(chunk[:n], pos); got < n {
			return 0, false, fmt.Errorf("read %d bytes at %d: %w", n, pos, errOr(err, io.ErrUnexpectedEOF))
		}
		for i := 0; ; {
			j := bytes.Index(chunk[i:n], magic[:])
			if j < 0 {
				break
			}
			at := pos + int64(i+j)
			ok, err := validCandidate(cand, at, minSeq)
			if err != nil || ok {
				return at, ok, err
			}
			i += j + 1
		}
		if pos+int64(n) >= end {
			break
		}
		pos += int64(n - magicScanOverlapBytes)
	}
	return 0, false, nil
}

// validCandidate reports whether a valid frame with seq >= minSeq starts at
// off. The cheap header checks run before the CRC.
func validCandidate(s *segReader, off int64, minSeq uint64) (bool, error) {
	hb, err := s.bytesAt(off, frameHeaderBytes)
	if errors.Is(err, errBeyondEnd) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if h, fault := parseFrameHeader(hb); fault != faultNone || h.seq < minSeq {
		return false, nil
	}
	_, _, fault, err := s.frameAt(off)
	return fault == faultNone && err == nil, err
}

func errOr(err, fallback error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return fallback
	}
	return err
}

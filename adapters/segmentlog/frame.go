package segmentlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/narad/narad/domain"
)

// ErrCorruptFrame reports bytes that are not a valid frame: bad magic, sizes
// out of range, a CRC mismatch, an unknown codec, or records that do not
// consume the payload exactly.
var ErrCorruptFrame = errors.New("segmentlog: corrupt frame")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameHeader is the 27-byte header of a frame (see the package doc).
type frameHeader struct {
	flags      byte
	count      int32
	base       int64
	rawSize    uint32 // inner bytes before the codec
	storedSize uint32 // payload bytes on disk
	crc        uint32
}

func (h frameHeader) codec() Codec { return Codec(h.flags & frameCodecMask) }

// frameBytes is the frame's length on disk, header included.
func (h frameHeader) frameBytes() int64 { return frameHeaderBytes + int64(h.storedSize) }

// end is the offset after the frame's last record.
func (h frameHeader) end() int64 { return h.base + int64(h.count) }

func putFrameHeader(b []byte, h frameHeader) {
	b[0], b[1] = frameMagic0, frameMagic1
	b[frameFlagsOff] = h.flags
	binary.BigEndian.PutUint32(b[frameCountOff:], uint32(h.count))
	binary.BigEndian.PutUint64(b[frameBaseOff:], uint64(h.base))
	binary.BigEndian.PutUint32(b[frameRawSizeOff:], h.rawSize)
	binary.BigEndian.PutUint32(b[frameStoredSizeOff:], h.storedSize)
	binary.BigEndian.PutUint32(b[frameCRCOff:], h.crc)
}

// parseFrameHeader decodes and range-checks a header; it does not check the
// CRC, which needs the payload.
func parseFrameHeader(b []byte) (frameHeader, error) {
	if len(b) < frameHeaderBytes {
		return frameHeader{}, fmt.Errorf("%w: %d header bytes", ErrCorruptFrame, len(b))
	}
	if b[0] != frameMagic0 || b[1] != frameMagic1 {
		return frameHeader{}, fmt.Errorf("%w: bad magic %#x%02x", ErrCorruptFrame, b[0], b[1])
	}
	h := frameHeader{
		flags:      b[frameFlagsOff],
		count:      int32(binary.BigEndian.Uint32(b[frameCountOff:])),
		base:       int64(binary.BigEndian.Uint64(b[frameBaseOff:])),
		rawSize:    binary.BigEndian.Uint32(b[frameRawSizeOff:]),
		storedSize: binary.BigEndian.Uint32(b[frameStoredSizeOff:]),
		crc:        binary.BigEndian.Uint32(b[frameCRCOff:]),
	}
	switch {
	case h.flags&frameReservedMask != 0:
		return h, fmt.Errorf("%w: reserved flag bits %#x", ErrCorruptFrame, h.flags)
	case !h.codec().known():
		return h, fmt.Errorf("%w: unknown codec %d", ErrCorruptFrame, h.codec())
	case h.count <= 0:
		return h, fmt.Errorf("%w: record count %d", ErrCorruptFrame, h.count)
	case h.base < 0 || h.base > math.MaxInt64-int64(h.count):
		return h, fmt.Errorf("%w: base offset %d", ErrCorruptFrame, h.base)
	case h.rawSize == 0 || h.rawSize > frameSizeMaxBytes:
		return h, fmt.Errorf("%w: uncompressed size %d", ErrCorruptFrame, h.rawSize)
	case h.storedSize == 0 || h.storedSize > frameSizeMaxBytes:
		return h, fmt.Errorf("%w: stored size %d", ErrCorruptFrame, h.storedSize)
	case h.codec() == CodecNone && h.rawSize != h.storedSize:
		return h, fmt.Errorf("%w: sizes %d and %d differ without a codec", ErrCorruptFrame, h.rawSize, h.storedSize)
	case uint32(h.count) > h.rawSize/(recordLenBytes+envelopeMinBytes):
		return h, fmt.Errorf("%w: %d records cannot fit %d bytes", ErrCorruptFrame, h.count, h.rawSize)
	}
	return h, nil
}

// frameCRC is the CRC-32C over header bytes [2,23) and the stored payload.
func frameCRC(header, payload []byte) uint32 {
	c := crc32.Update(0, castagnoli, header[frameFlagsOff:frameCRCOff])
	return crc32.Update(c, castagnoli, payload)
}

// verifyFrame checks that raw is exactly one frame whose CRC matches. It
// reads nothing past raw and decompresses nothing.
func verifyFrame(raw []byte) (frameHeader, error) {
	h, err := parseFrameHeader(raw)
	if err != nil {
		return h, err
	}
	if int64(len(raw)) != h.frameBytes() {
		return h, fmt.Errorf("%w: %d bytes for a %d-byte frame", ErrCorruptFrame, len(raw), h.frameBytes())
	}
	if got := frameCRC(raw, raw[frameHeaderBytes:]); got != h.crc {
		return h, fmt.Errorf("%w: crc %#08x, header says %#08x", ErrCorruptFrame, got, h.crc)
	}
	return h, nil
}

// appendFrame appends one frame holding count records (inner, already
// length-prefixed) starting at offset base, compressed with c.
func appendFrame(dst []byte, c *codecSet, base int64, count int, inner []byte) ([]byte, frameHeader, error) {
	if len(inner) == 0 || len(inner) > frameInnerSplitBytes {
		return dst, frameHeader{}, fmt.Errorf("frame of %d inner bytes: %w", len(inner), domain.ErrRecordTooLarge)
	}
	start := len(dst)
	dst = append(dst, make([]byte, frameHeaderBytes)...)
	dst = c.compress(dst, inner)
	stored := len(dst) - start - frameHeaderBytes
	if stored > frameSizeMaxBytes {
		return dst[:start], frameHeader{}, fmt.Errorf("frame stores %d bytes: %w", stored, domain.ErrRecordTooLarge)
	}
	h := frameHeader{
		flags:      byte(c.write),
		count:      int32(count),
		base:       base,
		rawSize:    uint32(len(inner)),
		storedSize: uint32(stored),
	}
	putFrameHeader(dst[start:], h)
	h.crc = frameCRC(dst[start:], dst[start+frameHeaderBytes:])
	putFrameHeader(dst[start:], h)
	return dst, h, nil
}

// decodedFrame is a frame's records, decoded once and shared read-only by
// every reader (records point into one decode buffer).
type decodedFrame struct {
	base  int64
	recs  []domain.Record
	bytes int // decoded inner bytes, for the cache budget
}

func (f *decodedFrame) end() int64 { return f.base + int64(len(f.recs)) }

// decodeFrame verifies raw (one whole frame), decompresses it with the codec
// its flags name and splits it into records. raw must not be reused after:
// with no codec the records point into it.
func decodeFrame(raw []byte, c *codecSet) (*decodedFrame, error) {
	h, err := verifyFrame(raw)
	if err != nil {
		return nil, err
	}
	inner, err := c.decompress(h, raw[frameHeaderBytes:])
	if err != nil {
		return nil, err
	}
	recs, err := parseRecords(inner, h.base, int(h.count))
	if err != nil {
		return nil, err
	}
	return &decodedFrame{base: h.base, recs: recs, bytes: len(inner)}, nil
}

// parseRecords splits inner (count length-prefixed envelopes) into records
// numbered from base. The records must consume inner exactly.
func parseRecords(inner []byte, base int64, count int) ([]domain.Record, error) {
	recs := make([]domain.Record, count)
	rest := inner
	for i := range recs {
		if len(rest) < recordLenBytes {
			return nil, fmt.Errorf("%w: record %d of %d truncated", ErrCorruptFrame, i, count)
		}
		n := binary.BigEndian.Uint32(rest)
		rest = rest[recordLenBytes:]
		if uint64(n) > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: record %d claims %d of %d bytes", ErrCorruptFrame, i, n, len(rest))
		}
		key, ms, payload, err := decodeEnvelope(rest[:n])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		recs[i] = domain.Record{Offset: base + int64(i), Key: key, Payload: payload, CommittedAtMs: ms}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last record", ErrCorruptFrame, len(rest))
	}
	return recs, nil
}

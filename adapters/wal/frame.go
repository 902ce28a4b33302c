package wal

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/narad/narad/domain"
)

// frameHeader is the decoded fixed part of a frame.
type frameHeader struct {
	length uint32
	seq    uint64
	crc    uint32
}

// frameBytes is the whole frame's size on disk.
func (h frameHeader) frameBytes() int64 { return frameHeaderBytes + int64(h.length) }

// frameFault classifies why bytes at an offset are not a valid frame.
type frameFault int

const (
	faultNone      frameFault = iota
	faultTruncated            // the file ends inside the header or payload
	faultMagic                // the first four bytes are not the magic
	faultLength               // payload length outside 1..16 MiB
	faultCRC                  // the payload does not match its checksum
	faultSeq                  // a valid frame with an unexpected sequence
)

func (f frameFault) String() string {
	switch f {
	case faultTruncated:
		return "frame truncated by the end of the file"
	case faultMagic:
		return "bad frame magic"
	case faultLength:
		return "frame length outside 1..16 MiB"
	case faultCRC:
		return "payload CRC mismatch"
	case faultSeq:
		return "sequence out of order"
	}
	return "valid frame"
}

// appendFrame appends the frame holding rec with sequence seq to dst. size
// must be recordSize(rec); rec must have passed checkRecord. The record is
// encoded straight into dst and checksummed there: one copy per record.
func appendFrame(dst []byte, seq uint64, rec domain.IngressRecord, size int) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, frameMagic)
	dst = binary.BigEndian.AppendUint32(dst, uint32(size))
	dst = binary.BigEndian.AppendUint64(dst, seq)
	dst = binary.BigEndian.AppendUint32(dst, 0) // CRC, filled below
	dst = appendRecord(dst, rec)
	crc := crc32.ChecksumIEEE(dst[start+frameHeaderBytes:])
	binary.BigEndian.PutUint32(dst[start+16:], crc)
	return dst
}

// encodeFrameRaw builds a frame around an already encoded payload. Tests and
// fuzz targets use it to forge frames.
func encodeFrameRaw(seq uint64, payload []byte) []byte {
	b := make([]byte, 0, frameHeaderBytes+len(payload))
	b = binary.BigEndian.AppendUint32(b, frameMagic)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.BigEndian.AppendUint64(b, seq)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(payload))
	return append(b, payload...)
}

// parseFrameHeader decodes a 20-byte header and checks magic and length.
func parseFrameHeader(b []byte) (frameHeader, frameFault) {
	if len(b) < frameHeaderBytes {
		return frameHeader{}, faultTruncated
	}
	if binary.BigEndian.Uint32(b) != frameMagic {
		return frameHeader{}, faultMagic
	}
	h := frameHeader{
		length: binary.BigEndian.Uint32(b[4:]),
		seq:    binary.BigEndian.Uint64(b[8:]),
		crc:    binary.BigEndian.Uint32(b[16:]),
	}
	if h.length == 0 || h.length > recordPayloadMaxBytes {
		return h, faultLength
	}
	return h, faultNone
}

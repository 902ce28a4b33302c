package receivelog

import (
	"encoding/binary"
	"hash/crc32"
	"math"

	"github.com/narad/narad/domain/deadletter"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// appendFrame appends r's frame to dst. r must be Valid.
func appendFrame(dst []byte, r deadletter.Record) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeaderBytes)...)
	dst = append(dst, byte(r.Kind))
	dst = binary.AppendUvarint(dst, uint64(r.Offset))
	dst = binary.AppendUvarint(dst, uint64(r.Count))
	dst = binary.AppendUvarint(dst, uint64(len(r.Reason)))
	dst = append(dst, r.Reason...)
	body := dst[start+frameHeaderBytes:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(dst[start+frameLenBytes:], crc32.Checksum(body, castagnoli))
	return dst
}

// encodeFrames is the frames of recs, in order.
func encodeFrames(dst []byte, recs []deadletter.Record) []byte {
	for _, r := range recs {
		dst = appendFrame(dst, r)
	}
	return dst
}

// decodeFrames reads b's frames in order and stops at the first that is
// short, fails its checksum, is too long, does not decode exactly or holds
// a record that is not Valid. It returns the records before it and the
// byte length of the frames that hold them (the good end).
func decodeFrames(b []byte) (recs []deadletter.Record, good int64) {
	for off := 0; ; {
		r, n, ok := decodeFrame(b[off:])
		if !ok {
			return recs, int64(off)
		}
		recs = append(recs, r)
		off += n
	}
}

// decodeFrame reads the frame at the start of b and returns its record and
// length; ok is false when it is not one whole, valid frame.
func decodeFrame(b []byte) (r deadletter.Record, n int, ok bool) {
	if len(b) < frameHeaderBytes {
		return r, 0, false
	}
	bodyLen := binary.BigEndian.Uint32(b)
	if bodyLen > frameBodyMaxBytes || uint64(len(b)-frameHeaderBytes) < uint64(bodyLen) {
		return r, 0, false
	}
	body := b[frameHeaderBytes : frameHeaderBytes+int(bodyLen)]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[frameLenBytes:]) {
		return r, 0, false
	}
	r, ok = decodeBody(body)
	if !ok {
		return r, 0, false
	}
	return r, frameHeaderBytes + len(body), true
}

// decodeBody parses a frame body, which must be consumed exactly.
func decodeBody(body []byte) (deadletter.Record, bool) {
	var r deadletter.Record
	if len(body) < 1 {
		return r, false
	}
	r.Kind, body = deadletter.Kind(body[0]), body[1:]
	offset, body, ok := uvarint(body, math.MaxInt64)
	if !ok {
		return r, false
	}
	count, body, ok := uvarint(body, math.MaxUint32)
	if !ok {
		return r, false
	}
	reasonLen, body, ok := uvarint(body, deadletter.ReasonBytesMax)
	if !ok || uint64(len(body)) != reasonLen {
		return r, false
	}
	r.Offset, r.Count, r.Reason = int64(offset), uint32(count), string(body)
	return r, r.Valid()
}

// uvarint reads a minimal uvarint no larger than limit from the start of b
// and returns it with the rest of b. A non-minimal encoding (a trailing
// zero byte) is refused so that every accepted frame re-encodes to itself.
func uvarint(b []byte, limit uint64) (uint64, []byte, bool) {
	v, k := binary.Uvarint(b)
	if k <= 0 || v > limit || (k > 1 && b[k-1] == 0) {
		return 0, b, false
	}
	return v, b[k:], true
}

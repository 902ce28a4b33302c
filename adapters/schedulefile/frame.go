package schedulefile

import (
	"encoding/binary"
	"hash/crc32"
	"iter"
	"math"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frame is one decoded frame. Its slices alias the bytes it was decoded
// from.
type frame struct {
	kind byte
	// kindRecord
	deliverAtMs  int64
	key, payload []byte
	// kindCommit: the record frames the commit closes. kindFired: the
	// ordinals named.
	count uint32
	// kindFired: count minimal uvarints, each checked, and the largest.
	ordinals   []byte
	maxOrdinal uint32
}

// firedOrdinals yields the ordinals of a fired frame, in frame order.
func (f frame) firedOrdinals() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for rest := f.ordinals; len(rest) > 0; {
			v, n := binary.Uvarint(rest) // checked by decodeFired
			if !yield(uint32(v)) {
				return
			}
			rest = rest[n:]
		}
	}
}

// appendRecordFrame appends the frame of a record to dst. The record must
// be one Append accepts.
func appendRecordFrame(dst []byte, deliverAtMs int64, key, payload []byte) []byte {
	dst, start := beginFrame(dst, kindRecord)
	dst = binary.BigEndian.AppendUint64(dst, uint64(deliverAtMs))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(payload)))
	dst = append(dst, payload...)
	return endFrame(dst, start)
}

// appendCommitFrame appends the frame closing a batch of count (>= 1)
// record frames.
func appendCommitFrame(dst []byte, count uint32) []byte {
	dst, start := beginFrame(dst, kindCommit)
	dst = binary.AppendUvarint(dst, uint64(count))
	return endFrame(dst, start)
}

// appendFiredFrames appends fired frames naming ordinals (at least one),
// as many as the body cap needs.
func appendFiredFrames(dst []byte, ordinals []uint32) []byte {
	for len(ordinals) > 0 {
		n := min(len(ordinals), firedFrameOrdinalsMax)
		dst = appendFiredFrame(dst, ordinals[:n])
		ordinals = ordinals[n:]
	}
	return dst
}

// appendFiredFrame appends one fired frame naming ordinals (1 to
// firedFrameOrdinalsMax of them).
func appendFiredFrame(dst []byte, ordinals []uint32) []byte {
	dst, start := beginFrame(dst, kindFired)
	dst = binary.AppendUvarint(dst, uint64(len(ordinals)))
	for _, o := range ordinals {
		dst = binary.AppendUvarint(dst, uint64(o))
	}
	return endFrame(dst, start)
}

// beginFrame appends room for a frame header and the kind byte; endFrame
// fills the header in once the body is whole.
func beginFrame(dst []byte, kind byte) ([]byte, int) {
	start := len(dst)
	dst = append(dst, make([]byte, frameHeaderBytes)...)
	return append(dst, kind), start
}

func endFrame(dst []byte, start int) []byte {
	body := dst[start+frameHeaderBytes:]
	binary.BigEndian.PutUint32(dst[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(dst[start+frameLenBytes:], crc32.Checksum(body, castagnoli))
	return dst
}

// decodeFrame reads the frame at the start of b and returns it with its
// length; ok is false when b does not start with one whole frame that has
// a sound checksum, a body under the cap, and a body that decodes exactly.
func decodeFrame(b []byte) (f frame, n int, ok bool) {
	if len(b) < frameHeaderBytes {
		return f, 0, false
	}
	bodyLen := binary.BigEndian.Uint32(b)
	if bodyLen == 0 || bodyLen > frameBodyMaxBytes || uint64(len(b)-frameHeaderBytes) < uint64(bodyLen) {
		return f, 0, false
	}
	body := b[frameHeaderBytes : frameHeaderBytes+int(bodyLen)]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(b[frameLenBytes:]) {
		return f, 0, false
	}
	f.kind = body[0]
	switch f.kind {
	case kindRecord:
		ok = decodeRecord(&f, body[1:])
	case kindFired:
		ok = decodeFired(&f, body[1:])
	case kindCommit:
		ok = decodeCommit(&f, body[1:])
	}
	if !ok {
		return frame{}, 0, false
	}
	return f, frameHeaderBytes + len(body), true
}

// decodeRecord parses a record body after its kind:
// deliver_at_ms | key length | key | payload length | payload.
func decodeRecord(f *frame, b []byte) bool {
	if len(b) < deliverAtBytes {
		return false
	}
	at := binary.BigEndian.Uint64(b)
	if at == 0 || at > math.MaxInt64 {
		return false
	}
	keyLen, b, ok := uvarint(b[deliverAtBytes:], recordKeyMaxBytes)
	if !ok || uint64(len(b)) < keyLen {
		return false
	}
	key, b := b[:keyLen], b[keyLen:]
	payloadLen, b, ok := uvarint(b, recordPayloadMaxBytes)
	if !ok || payloadLen == 0 || uint64(len(b)) != payloadLen {
		return false
	}
	f.deliverAtMs, f.key, f.payload = int64(at), key, b
	return true
}

// decodeFired parses a fired body after its kind: count | count × ordinal.
func decodeFired(f *frame, b []byte) bool {
	count, b, ok := uvarint(b, firedFrameOrdinalsMax)
	if !ok || count == 0 {
		return false
	}
	f.count, f.ordinals = uint32(count), b
	for range count {
		var o uint64
		if o, b, ok = uvarint(b, recordsMax-1); !ok {
			return false
		}
		f.maxOrdinal = max(f.maxOrdinal, uint32(o))
	}
	return len(b) == 0
}

// decodeCommit parses a commit body after its kind: count.
func decodeCommit(f *frame, b []byte) bool {
	count, b, ok := uvarint(b, recordsMax)
	if !ok || count == 0 || len(b) != 0 {
		return false
	}
	f.count = uint32(count)
	return true
}

// uvarint reads a minimal uvarint no larger than limit from the start of b
// and returns it with the rest of b. A non-minimal encoding (a last byte of
// zero) is refused, so that every accepted frame re-encodes to itself.
func uvarint(b []byte, limit uint64) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 || v > limit || (n > 1 && b[n-1] == 0) {
		return 0, b, false
	}
	return v, b[n:], true
}

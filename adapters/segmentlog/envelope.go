package segmentlog

import (
	"encoding/binary"
	"fmt"
)

// envelopeBytes is the encoded size of a record with this key and payload.
func envelopeBytes(keyLen, payloadLen int) int {
	return 1 + uvarintLen(uint64(keyLen)) + keyLen + envelopeTimeBytes + payloadLen
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendEnvelope appends the keyed envelope
// 0x02 | uvarint key length | key | committed_at_ms int64 | payload.
func appendEnvelope(dst, key []byte, committedAtMs int64, payload []byte) []byte {
	dst = append(dst, envelopeVersion)
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(committedAtMs))
	return append(dst, payload...)
}

// decodeEnvelope splits one envelope. key and payload point into b. Version
// 0x01 (the pre-key envelope) and any other version decode as corrupt.
func decodeEnvelope(b []byte) (key []byte, committedAtMs int64, payload []byte, err error) {
	if len(b) < envelopeMinBytes {
		return nil, 0, nil, fmt.Errorf("%w: envelope of %d bytes", ErrCorruptFrame, len(b))
	}
	if b[0] != envelopeVersion {
		return nil, 0, nil, fmt.Errorf("%w: envelope version %#x", ErrCorruptFrame, b[0])
	}
	keyLen, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return nil, 0, nil, fmt.Errorf("%w: envelope key length", ErrCorruptFrame)
	}
	rest := b[1+n:]
	if keyLen > uint64(len(rest)) || uint64(len(rest))-keyLen < envelopeTimeBytes {
		return nil, 0, nil, fmt.Errorf("%w: envelope key of %d bytes in %d", ErrCorruptFrame, keyLen, len(rest))
	}
	key = rest[:keyLen:keyLen]
	rest = rest[keyLen:]
	committedAtMs = int64(binary.BigEndian.Uint64(rest))
	payload = rest[envelopeTimeBytes:len(rest):len(rest)]
	return key, committedAtMs, payload, nil
}

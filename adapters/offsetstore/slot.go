package offsetstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"github.com/narad/narad/ports"
)

// errBadSlot reports a slot that is not one valid record: torn, never
// written, or damaged. Recovery falls back to the other slot.
var errBadSlot = errors.New("offsetstore: invalid consumer.ahead slot")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// record is one slot's content.
type record struct {
	seq     uint64 // generation: the larger seq is the newer record
	offsets ports.ConsumerOffsets
}

// encodeSlot writes r into dst (slotBytes long, fully overwritten). Offsets
// at or below the frontier are dropped; when the set does not fit, the
// lowest offsets are kept and the rest left out (they are redelivered).
func encodeSlot(dst []byte, r record) {
	clear(dst[:slotBytes])
	copy(dst[slotMagicOff:], slotMagic[:])
	dst[slotVersionOff] = slotVersion
	binary.BigEndian.PutUint64(dst[slotSeqOff:], r.seq)
	binary.BigEndian.PutUint64(dst[slotCommitOff:], uint64(r.offsets.Committed))
	count, n := encodeBody(dst[slotHeaderBytes:slotCRCOff], r.offsets)
	binary.BigEndian.PutUint32(dst[slotCountOff:], uint32(count))
	binary.BigEndian.PutUint32(dst[slotBodyLenOff:], uint32(n))
	binary.BigEndian.PutUint32(dst[slotCRCOff:], crc32.Checksum(dst[:slotCRCOff], castagnoli))
}

// encodeBody writes the acked-ahead offsets above the frontier as ascending
// uvarint deltas (the first from the frontier) and returns how many offsets
// and bytes it wrote.
func encodeBody(body []byte, o ports.ConsumerOffsets) (count, n int) {
	ahead := slices.Clone(o.AckedAhead)
	slices.Sort(ahead)
	prev := o.Committed
	var tmp [binary.MaxVarintLen64]byte
	for _, off := range ahead {
		if off <= prev {
			continue // at or below the frontier, or a duplicate
		}
		k := binary.PutUvarint(tmp[:], uint64(off-prev))
		if n+k > len(body) {
			break
		}
		copy(body[n:], tmp[:k])
		n += k
		count++
		prev = off
	}
	return count, n
}

// decodeSlot parses one slot, checking every field: a slot that was torn,
// never written or damaged answers errBadSlot.
func decodeSlot(b []byte) (record, error) {
	if len(b) != slotBytes {
		return record{}, fmt.Errorf("%d bytes: %w", len(b), errBadSlot)
	}
	if err := checkHeader(b); err != nil {
		return record{}, err
	}
	r := record{seq: binary.BigEndian.Uint64(b[slotSeqOff:])}
	r.offsets.Committed = int64(binary.BigEndian.Uint64(b[slotCommitOff:]))
	count := binary.BigEndian.Uint32(b[slotCountOff:])
	bodyLen := binary.BigEndian.Uint32(b[slotBodyLenOff:])
	switch {
	case r.seq == 0:
		return record{}, fmt.Errorf("zero generation: %w", errBadSlot)
	case r.offsets.Committed < -1:
		return record{}, fmt.Errorf("frontier %d: %w", r.offsets.Committed, errBadSlot)
	case bodyLen > slotBodyMax || count > bodyLen:
		return record{}, fmt.Errorf("count %d in %d body bytes: %w", count, bodyLen, errBadSlot)
	}
	body := b[slotHeaderBytes : slotHeaderBytes+int(bodyLen)]
	ahead, err := decodeBody(body, int(count), r.offsets.Committed)
	if err != nil {
		return record{}, err
	}
	if !allZero(b[slotHeaderBytes+int(bodyLen) : slotCRCOff]) {
		return record{}, fmt.Errorf("padding not zero: %w", errBadSlot)
	}
	r.offsets.AckedAhead = ahead
	return r, nil
}

func checkHeader(b []byte) error {
	switch {
	case [4]byte(b[slotMagicOff:slotMagicOff+4]) != slotMagic:
		return fmt.Errorf("no magic: %w", errBadSlot)
	case crc32.Checksum(b[:slotCRCOff], castagnoli) != binary.BigEndian.Uint32(b[slotCRCOff:]):
		return fmt.Errorf("checksum mismatch: %w", errBadSlot)
	case b[slotVersionOff] != slotVersion:
		return fmt.Errorf("version %d: %w", b[slotVersionOff], errBadSlot)
	case !allZero(b[slotReservedOff:slotSeqOff]):
		return fmt.Errorf("reserved bytes set: %w", errBadSlot)
	}
	return nil
}

// decodeBody reads count strictly ascending offsets above committed, which
// must consume body exactly.
func decodeBody(body []byte, count int, committed int64) ([]int64, error) {
	ahead := make([]int64, 0, count)
	prev := committed
	for range count {
		d, k := binary.Uvarint(body)
		if k <= 0 || d == 0 || d > uint64(math.MaxInt64-max(prev, 0)) {
			return nil, fmt.Errorf("bad delta after %d: %w", prev, errBadSlot)
		}
		body = body[k:]
		prev += int64(d)
		ahead = append(ahead, prev)
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("%d trailing body bytes: %w", len(body), errBadSlot)
	}
	return ahead, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// newest decodes both slots of a consumer.ahead image and returns the index
// of the newest valid one (-1 when neither is valid) and its record.
func newest(image []byte) (int, record) {
	best, out := -1, record{}
	for i := range 2 {
		if len(image) < (i+1)*slotBytes {
			break
		}
		r, err := decodeSlot(image[i*slotBytes : (i+1)*slotBytes])
		if err == nil && (best < 0 || r.seq > out.seq) {
			best, out = i, r
		}
	}
	return best, out
}

// encodeOffsetFile is consumer.offset's content for frontier committed.
func encodeOffsetFile(committed int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, offsetFileBytes), uint64(committed))
}

// decodeOffsetFile reads consumer.offset: an empty, short or out-of-range
// file reads as no offset (-1).
func decodeOffsetFile(b []byte) int64 {
	if len(b) < offsetFileBytes {
		return -1
	}
	v := int64(binary.BigEndian.Uint64(b))
	if v < -1 {
		return -1
	}
	return v
}

// VerifyAhead checks that b is a consumer.ahead image a load can use: one
// valid slot at least, or nothing written yet (a move's source checks it
// before shipping, its destination before installing: internals.md §11.4).
func VerifyAhead(b []byte) error {
	if allZero(b) {
		return nil
	}
	if best, _ := newest(b); best < 0 {
		return fmt.Errorf("offsetstore: no valid slot in %d bytes of consumer.ahead", len(b))
	}
	return nil
}

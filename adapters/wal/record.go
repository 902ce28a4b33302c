package wal

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/narad/narad/domain"
)

// checkRecord validates rec and returns its encoded size.
func checkRecord(rec domain.IngressRecord) (int, error) {
	if err := rec.Validate(); err != nil {
		return 0, err
	}
	size := recordSize(rec)
	if size > recordPayloadMaxBytes {
		return 0, fmt.Errorf("record of %d encoded bytes above the %d-byte cap: %w",
			size, recordPayloadMaxBytes, domain.ErrRecordTooLarge)
	}
	return size, nil
}

// recordSize is the encoded size of rec (format 3 when it is scheduled,
// else format 2 when it has a topic id).
func recordSize(rec domain.IngressRecord) int {
	n := recordFixedBytes + len(rec.Topic) + len(rec.Key) + len(rec.Payload)
	switch {
	case rec.DeliverAtMs > 0:
		n += recordDeliverAtExtraBytes + len(rec.TopicID)
	case rec.TopicID != "":
		n += recordTopicIDExtraBytes
	}
	return n
}

// appendRecord appends the encoding of a validated rec to dst.
func appendRecord(dst []byte, rec domain.IngressRecord) []byte {
	switch {
	case rec.DeliverAtMs > 0:
		dst = append(dst, recordFormatScheduled)
		dst = appendStr(dst, rec.Topic)
		dst = appendStr(dst, string(rec.TopicID))
	case rec.TopicID == "":
		dst = append(dst, recordFormatLegacy)
		dst = appendStr(dst, rec.Topic)
	default:
		dst = append(dst, recordFormatIncarnation)
		dst = appendStr(dst, rec.Topic)
		dst = appendStr(dst, string(rec.TopicID))
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec.Key)))
	dst = append(dst, rec.Key...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(rec.Partition))
	dst = binary.BigEndian.AppendUint64(dst, uint64(rec.CreatedAtMs))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(rec.Payload)))
	dst = append(dst, rec.Payload...)
	if rec.DeliverAtMs > 0 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(rec.DeliverAtMs))
	}
	return dst
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// decodeRecord decodes one record payload, format 1, 2 or 3. It accepts
// exactly what appendRecord writes for a valid record: anything else (unknown
// format, truncation, trailing bytes, a record Validate rejects, format 2
// without a topic id, format 3 without a deliver-at) is an error wrapping
// ErrRecordFormat. Key and payload are copied
// into one fresh allocation no larger than p, so the result never aliases p.
func decodeRecord(p []byte) (domain.IngressRecord, error) {
	d := recordDecoder{b: p}
	format := d.byte()
	if d.err == nil && format != recordFormatLegacy && format != recordFormatIncarnation && format != recordFormatScheduled {
		return domain.IngressRecord{}, fmt.Errorf("format %d: %w", format, ErrRecordFormat)
	}
	topic := d.field()
	var topicID []byte
	if format != recordFormatLegacy {
		topicID = d.field()
	}
	key := d.field()
	partition := d.u32()
	created := d.u64()
	payload := d.field()
	var deliverAt uint64
	if format == recordFormatScheduled {
		deliverAt = d.u64()
	}
	if d.err != nil {
		return domain.IngressRecord{}, d.err
	}
	if len(d.b) != 0 {
		return domain.IngressRecord{}, fmt.Errorf("%d trailing bytes: %w", len(d.b), ErrRecordFormat)
	}
	if partition > domain.PartitionMax || created > math.MaxInt64 || deliverAt > math.MaxInt64 {
		return domain.IngressRecord{}, fmt.Errorf("partition, created_at_ms or deliver_at_ms out of range: %w", ErrRecordFormat)
	}
	if format == recordFormatScheduled && deliverAt == 0 {
		return domain.IngressRecord{}, fmt.Errorf("format 3 without a deliver-at: %w", ErrRecordFormat)
	}
	if format == recordFormatIncarnation && len(topicID) == 0 {
		return domain.IngressRecord{}, fmt.Errorf("format 2 without a topic id: %w", ErrRecordFormat)
	}
	rec := domain.IngressRecord{
		Topic:       string(topic),
		TopicID:     domain.TopicID(topicID),
		Partition:   int32(partition),
		CreatedAtMs: int64(created),
		DeliverAtMs: int64(deliverAt),
	}
	rec.Key, rec.Payload = copyKeyPayload(key, payload)
	if err := rec.Validate(); err != nil {
		return domain.IngressRecord{}, fmt.Errorf("%w: %w", ErrRecordFormat, err)
	}
	return rec, nil
}

// copyKeyPayload copies key and payload into one allocation; an empty key
// decodes as nil.
func copyKeyPayload(key, payload []byte) ([]byte, []byte) {
	buf := make([]byte, len(key)+len(payload))
	copy(buf, key)
	copy(buf[len(key):], payload)
	var k []byte
	if len(key) > 0 {
		k = buf[:len(key):len(key)]
	}
	return k, buf[len(key):]
}

// recordDecoder reads big-endian fields off b, remembering the first error.
type recordDecoder struct {
	b   []byte
	err error
}

func (d *recordDecoder) take(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = fmt.Errorf("truncated: want %d bytes, have %d: %w", n, len(d.b), ErrRecordFormat)
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *recordDecoder) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *recordDecoder) u32() uint64 {
	if v := d.take(4); v != nil {
		return uint64(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (d *recordDecoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// field reads a u32 length and that many bytes (a str or bytes field).
func (d *recordDecoder) field() []byte {
	n := d.u32()
	return d.take(n)
}

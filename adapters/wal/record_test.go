package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/narad/narad/domain"
)

// ensure that format 1 is laid out byte for byte as spec 2.2 says.
func TestRecordFormat1Layout(t *testing.T) {
	rec := domain.IngressRecord{Topic: "ab", Key: []byte("k"), Partition: 7, CreatedAtMs: 0x0102030405060708, Payload: []byte("xyz")}
	want := []byte{1, 0, 0, 0, 2, 'a', 'b', 0, 0, 0, 1, 'k', 0, 0, 0, 7,
		1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 3, 'x', 'y', 'z'}
	got := appendRecord(nil, rec)
	if !bytes.Equal(got, want) || recordSize(rec) != len(want) {
		t.Fatalf("format 1 = %x (size %d), want %x", got, recordSize(rec), want)
	}
}

// ensure that format 2 carries the topic id as a 16-character str after the
// topic, and is chosen exactly when the topic id is set.
func TestRecordFormat2Layout(t *testing.T) {
	rec := domain.IngressRecord{Topic: "a", TopicID: "0123456789abcdef", Partition: 1, CreatedAtMs: 2, Payload: []byte("p")}
	want := []byte{2, 0, 0, 0, 1, 'a', 0, 0, 0, 16}
	want = append(want, "0123456789abcdef"...)
	want = append(want, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 'p')
	got := appendRecord(nil, rec)
	if !bytes.Equal(got, want) || recordSize(rec) != len(want) {
		t.Fatalf("format 2 = %x (size %d), want %x", got, recordSize(rec), want)
	}
	back, err := decodeRecord(got)
	if err != nil || !sameRecord(back, rec) {
		t.Fatalf("decode = %+v, %v", back, err)
	}
}

// ensure that format 3 carries the deliver-at after the payload, is chosen
// exactly when the record is scheduled (with or without a topic id), and
// that a format 3 record without a deliver-at is refused.
func TestRecordFormat3Layout(t *testing.T) {
	rec := domain.IngressRecord{Topic: "a", Partition: 1, CreatedAtMs: 2, Payload: []byte("p"), DeliverAtMs: 0x0a0b}
	want := []byte{3, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 'p', 0, 0, 0, 0, 0, 0, 0x0a, 0x0b}
	got := appendRecord(nil, rec)
	if !bytes.Equal(got, want) || recordSize(rec) != len(want) {
		t.Fatalf("format 3 = %x (size %d), want %x", got, recordSize(rec), want)
	}
	for _, r := range []domain.IngressRecord{rec, {Topic: "a", TopicID: "0123456789abcdef", Key: []byte("k"), Payload: []byte("p"), DeliverAtMs: 1}} {
		enc := appendRecord(nil, r)
		back, err := decodeRecord(enc)
		if err != nil || !sameRecord(back, r) || recordSize(r) != len(enc) {
			t.Fatalf("decode %+v = %+v, %v", r, back, err)
		}
	}
	zero := bytes.Clone(got)
	copy(zero[len(zero)-8:], make([]byte, 8))
	if _, err := decodeRecord(zero); !errors.Is(err, ErrRecordFormat) {
		t.Fatalf("format 3 with deliver_at_ms 0: %v", err)
	}
}

// ensure that every truncation, any trailing byte and unknown formats are
// refused with ErrRecordFormat.
func TestRecordDecodeRejects(t *testing.T) {
	good := appendRecord(nil, testRecord(1, 10))
	for n := range len(good) {
		if _, err := decodeRecord(good[:n]); !errors.Is(err, ErrRecordFormat) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	if _, err := decodeRecord(append(bytes.Clone(good), 0)); !errors.Is(err, ErrRecordFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	for _, f := range []byte{0, 4, 255} {
		bad := bytes.Clone(good)
		bad[0] = f
		if _, err := decodeRecord(bad); !errors.Is(err, ErrRecordFormat) {
			t.Fatalf("format %d: %v", f, err)
		}
	}
	noID := appendStr([]byte{recordFormatIncarnation}, "t") // topic
	noID = appendStr(noID, "")                              // empty topic id
	noID = appendStr(noID, "")                              // key
	noID = append(noID, make([]byte, 4+8)...)               // partition, created_at_ms
	noID = appendStr(noID, "p")                             // payload
	if _, err := decodeRecord(noID); !errors.Is(err, ErrRecordFormat) {
		t.Fatalf("format 2 without topic id: %v", err)
	}
}

// ensure that a huge declared length allocates nothing close to it.
func TestRecordDecodeHugeLengthDoesNotAllocate(t *testing.T) {
	b := []byte{1, 0xFF, 0xFF, 0xFF, 0xFF, 'x'}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := decodeRecord(b); !errors.Is(err, ErrRecordFormat) {
			t.Fatalf("decode: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("decoding a 4 GiB declared length allocated %d bytes", grew)
	}
}

// ensure that the size cap counts the encoded record and answers
// domain.ErrRecordTooLarge exactly above 16 MiB.
func TestCheckRecordSizeCap(t *testing.T) {
	fits := domain.IngressRecord{Topic: "t", Payload: make([]byte, recordPayloadMaxBytes-recordFixedBytes-1)}
	if size, err := checkRecord(fits); err != nil || size != recordPayloadMaxBytes {
		t.Fatalf("record of exactly 16 MiB: size %d, %v", size, err)
	}
	fits.Payload = append(fits.Payload, 0)
	if _, err := checkRecord(fits); !errors.Is(err, domain.ErrRecordTooLarge) {
		t.Fatalf("record one byte above 16 MiB: %v", err)
	}
}

// ensure that the frame header is magic, length, seq, CRC-32 IEEE, big-endian.
func TestFrameLayout(t *testing.T) {
	rec := testRecord(3, 5)
	size := recordSize(rec)
	f := appendFrame(nil, 42, rec, size)
	if binary.BigEndian.Uint32(f) != 0x4E57414C || string(f[:4]) != "NWAL" {
		t.Fatalf("magic %x", f[:4])
	}
	if binary.BigEndian.Uint32(f[4:]) != uint32(size) || binary.BigEndian.Uint64(f[8:]) != 42 {
		t.Fatalf("length/seq %x", f[4:16])
	}
	if !bytes.Equal(f, encodeFrameRaw(42, appendRecord(nil, rec))) {
		t.Fatal("appendFrame and encodeFrameRaw disagree")
	}
}

package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// fuzzSegment builds a segment image of n frames from seq base.
func fuzzSegment(base uint64, n int) []byte {
	var b []byte
	for i := range n {
		rec := testRecord(i, 1+i*3)
		b = appendFrame(b, base+uint64(i), rec, recordSize(rec))
	}
	return b
}

// frameSeeds are valid and damaged segment images for FuzzFrameDecode.
func frameSeeds() [][]byte {
	three := fuzzSegment(5, 3)
	flipped := bytes.Clone(three)
	flipped[frameHeaderBytes+2] ^= 0x10
	huge := bytes.Clone(three[:frameHeaderBytes])
	binary.BigEndian.PutUint32(huge[4:], 0xFFFFFFFF)
	zeroTail := append(bytes.Clone(three), make([]byte, 64)...)
	return [][]byte{nil, fuzzSegment(0, 1), three, three[:len(three)-7], flipped, huge, zeroTail,
		[]byte("NWAL"), append(bytes.Clone(three[:30]), three...),
		preparedSeed(three, 512), preparedSeed(flipped, 512), preparedSeed(append(bytes.Clone(three[:30]), three...), 1024)}
}

// preparedSeed is data laid out as a prepared segment of the given limit.
func preparedSeed(data []byte, limit int) []byte {
	b := make([]byte, limit)
	copy(b, data)
	return append(b, prepTrailer(int64(limit))...)
}

// ensure that scanning any segment image never panics, never over-allocates,
// and that what it accepts is self-consistent: rescanning the valid prefix as
// a sealed segment finds the same frames, and every accepted frame re-encodes
// to its own bytes.
func FuzzFrameDecode(f *testing.F) {
	for _, s := range frameSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := uint64(0)
		if len(data) >= 16 {
			base = binary.BigEndian.Uint64(data[8:])
		}
		for _, last := range []bool{true, false} {
			res, err := scanSegment(bytes.NewReader(data), int64(len(data)), "seg", base, last)
			if err != nil {
				var ce *CorruptionError
				if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset >= int64(len(data)) {
					t.Fatalf("last=%v: error %v is not a corruption inside the image", last, err)
				}
				continue
			}
			checkScan(t, data, base, last, res)
		}
	})
}

func checkScan(t *testing.T, data []byte, base uint64, last bool, res scanResult) {
	t.Helper()
	prepared := res.prepLimit > 0
	if res.validEnd > int64(len(data)) || (!res.torn && !prepared && res.validEnd != int64(len(data))) ||
		((res.torn || prepared) && !last) {
		t.Fatalf("last=%v: validEnd %d torn %v prepared %v for %d bytes", last, res.validEnd, res.torn, prepared, len(data))
	}
	if prepared && !res.torn && bytes.ContainsFunc(data[res.validEnd:res.prepLimit], func(r rune) bool { return r != 0 }) {
		t.Fatalf("prepared data end %d accepted with non-zero bytes before the limit %d", res.validEnd, res.prepLimit)
	}
	again, err := scanSegment(bytes.NewReader(data[:res.validEnd]), res.validEnd, "seg", base, false)
	if err != nil || again.count != res.count || again.next != res.next {
		t.Fatalf("rescan of the valid prefix: %+v, %v; first scan %+v", again, err, res)
	}
	seq := base
	for off := 0; off < int(res.validEnd); seq++ {
		h, fault := parseFrameHeader(data[off:])
		if fault != faultNone || h.seq != seq {
			t.Fatalf("frame at %d: %v seq %d, want %d", off, fault, h.seq, seq)
		}
		end := off + int(h.frameBytes())
		payload := data[off+frameHeaderBytes : end]
		if !bytes.Equal(encodeFrameRaw(h.seq, payload), data[off:end]) {
			t.Fatalf("frame at %d does not re-encode to its bytes", off)
		}
		roundTripRecord(t, payload)
		off = end
	}
}

// roundTripRecord checks that a decodable payload re-encodes to itself.
func roundTripRecord(t *testing.T, data []byte) {
	t.Helper()
	rec, err := decodeRecord(data)
	if err != nil {
		if !errors.Is(err, ErrRecordFormat) {
			t.Fatalf("decode error %v does not wrap ErrRecordFormat", err)
		}
		return
	}
	size, err := checkRecord(rec)
	if err != nil {
		t.Fatalf("decoded record fails checkRecord: %v", err)
	}
	if enc := appendRecord(nil, rec); size != len(data) || !bytes.Equal(enc, data) {
		t.Fatalf("re-encoded %x (size %d), decoded from %x", enc, size, data)
	}
}

// ensure that decoding any payload never panics, refuses with
// ErrRecordFormat, and that whatever decodes re-encodes to the same bytes.
func FuzzRecordDecode(f *testing.F) {
	for i := range 4 {
		f.Add(appendRecord(nil, testRecord(i, i*5+1)))
	}
	scheduled := testRecord(3, 7)
	scheduled.DeliverAtMs = 1_800_000_000_000
	f.Add(appendRecord(nil, scheduled))
	good := appendRecord(nil, testRecord(1, 9))
	f.Add(good[:len(good)-1])
	f.Add(append(bytes.Clone(good), 0))
	f.Add([]byte{3, 0, 0, 0, 0})
	f.Add([]byte{1, 0xFF, 0xFF, 0xFF, 0xFF})
	f.Fuzz(roundTripRecord)
}

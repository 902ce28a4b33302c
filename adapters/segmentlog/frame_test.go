package segmentlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/narad/narad/domain"
)

// sharedCodecs are the tests' codec sets, one per codec, so that pooled
// encoders are reused across calls.
var sharedCodecs sync.Map // Codec → *codecSet

func testCodecs(t testing.TB, c Codec) *codecSet {
	t.Helper()
	if cs, ok := sharedCodecs.Load(c); ok {
		return cs.(*codecSet)
	}
	cs, err := newCodecSet(c, LevelDefault)
	if err != nil {
		t.Fatal(err)
	}
	actual, _ := sharedCodecs.LoadOrStore(c, cs)
	return actual.(*codecSet)
}

// innerOf builds the inner bytes of recs as a drain would.
func innerOf(recs []domain.Record) []byte {
	var b recordBuffer
	for _, r := range recs {
		b.data = binary.BigEndian.AppendUint32(b.data, uint32(envelopeBytes(len(r.Key), len(r.Payload))))
		b.data = appendEnvelope(b.data, r.Key, r.CommittedAtMs, r.Payload)
	}
	return b.data
}

func encodeTestFrame(t testing.TB, c Codec, base int64, recs []domain.Record) []byte {
	t.Helper()
	raw, _, err := appendFrame(nil, testCodecs(t, c), base, len(recs), innerOf(recs))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// ensure that frames round-trip with both codecs: offsets, keys (empty too),
// payloads and commit times, and the header describes the frame.
func TestFrameRoundTrip(t *testing.T) {
	recs := append(batch(1, 50), domain.Record{Payload: []byte{}}, domain.Record{Key: []byte{0, 0xff}, Payload: []byte{0}})
	for _, c := range []Codec{CodecNone, CodecZstd} {
		raw := encodeTestFrame(t, c, 1234, recs)
		h, err := verifyFrame(raw)
		if err != nil || h.codec() != c || h.base != 1234 || int(h.count) != len(recs) {
			t.Fatalf("%v: header %+v, %v", c, h, err)
		}
		fr, err := decodeFrame(raw, testCodecs(t, c))
		if err != nil {
			t.Fatalf("%v: decode: %v", c, err)
		}
		for i, r := range fr.recs {
			w := recs[i]
			if r.Offset != 1234+int64(i) || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Payload, w.Payload) || r.CommittedAtMs != w.CommittedAtMs {
				t.Fatalf("%v: record %d = %+v, want %+v", c, i, r, w)
			}
		}
	}
	if z, n := encodeTestFrame(t, CodecZstd, 0, batch(2, 200)), encodeTestFrame(t, CodecNone, 0, batch(2, 200)); len(z)*3 > len(n) {
		t.Fatalf("zstd frame of JSON-like records is %d bytes against %d raw: compression not applied", len(z), len(n))
	}
}

// ensure that every kind of damage decodes as ErrCorruptFrame: CRC, magic,
// reserved flags, unknown codec, sizes, trailing bytes, a legacy envelope.
func TestFrameDamageIsCorrupt(t *testing.T) {
	good := encodeTestFrame(t, CodecNone, 7, batch(3, 4))
	fixCRC := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[frameCRCOff:], frameCRC(b, b[frameHeaderBytes:]))
		return b
	}
	legacy := encodeTestFrame(t, CodecNone, 0, batch(4, 1))
	legacy[frameHeaderBytes+recordLenBytes] = envelopeVersionLegacy
	cases := map[string][]byte{
		"payload_bit":    flipByte(good, frameHeaderBytes+9),
		"magic":          flipByte(good, 0),
		"base_bit":       flipByte(good, frameBaseOff+7),
		"reserved_flags": fixCRC(setByte(good, frameFlagsOff, 0x08)),
		"unknown_codec":  fixCRC(setByte(good, frameFlagsOff, 0x05)),
		"zero_count":     fixCRC(setU32(good, frameCountOff, 0)),
		"count_too_big":  fixCRC(setU32(good, frameCountOff, 5)),
		"count_short":    fixCRC(setU32(good, frameCountOff, 3)),
		"stored_too_big": fixCRC(setU32(good, frameStoredSizeOff, frameSizeMaxBytes+1)),
		"sizes_differ":   fixCRC(setU32(good, frameRawSizeOff, 3)),
		"short":          good[:len(good)-1],
		"long":           append(bytes.Clone(good), 0),
		"legacy_env":     fixCRC(legacy),
		"header_only":    good[:frameHeaderBytes],
	}
	for name, raw := range cases {
		if _, err := decodeFrame(raw, testCodecs(t, CodecZstd)); !errors.Is(err, ErrCorruptFrame) {
			t.Errorf("%s: error %v, want ErrCorruptFrame", name, err)
		}
	}
}

func flipByte(b []byte, i int) []byte { c := bytes.Clone(b); c[i] ^= 0x04; return c }

func setByte(b []byte, i int, v byte) []byte { c := bytes.Clone(b); c[i] = v; return c }

func setU32(b []byte, i int, v uint32) []byte {
	c := bytes.Clone(b)
	binary.BigEndian.PutUint32(c[i:], v)
	return c
}

// ensure that a frame whose header claims huge sizes (CRC made valid) is
// refused without allocating anything near what it claims.
func TestFrameClaimedSizesDoNotAllocate(t *testing.T) {
	small := encodeTestFrame(t, CodecZstd, 0, batch(5, 3))
	huge := setU32(small, frameRawSizeOff, frameSizeMaxBytes)
	binary.BigEndian.PutUint32(huge[frameCRCOff:], frameCRC(huge, huge[frameHeaderBytes:]))
	cs := testCodecs(t, CodecZstd)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		if _, err := decodeFrame(huge, cs); !errors.Is(err, ErrCorruptFrame) {
			t.Fatalf("decode: %v, want ErrCorruptFrame", err)
		}
		if _, err := parseFrameHeader(setU32(small, frameStoredSizeOff, 1<<31)); !errors.Is(err, ErrCorruptFrame) {
			t.Fatalf("oversized header: %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Fatalf("refusing 20 lying frames allocated %d bytes", grown)
	}
}

// ensure that records a frame cannot hold are refused before anything is
// appended.
func TestOversizedRecordRefused(t *testing.T) {
	err := checkRecords([]domain.Record{{Payload: make([]byte, frameInnerSplitBytes)}})
	if !errors.Is(err, domain.ErrRecordTooLarge) {
		t.Fatalf("record of %d bytes: %v, want ErrRecordTooLarge", frameInnerSplitBytes, err)
	}
}

// ensure that the envelope round-trips and that any version other than 0x02
// is corrupt.
func TestEnvelope(t *testing.T) {
	env := appendEnvelope(nil, []byte("k"), -1, []byte("payload"))
	key, ms, payload, err := decodeEnvelope(env)
	if err != nil || string(key) != "k" || ms != -1 || string(payload) != "payload" {
		t.Fatalf("decode = %q %d %q %v", key, ms, payload, err)
	}
	for _, v := range []byte{0x00, envelopeVersionLegacy, 0x03} {
		bad := bytes.Clone(env)
		bad[0] = v
		if _, _, _, err := decodeEnvelope(bad); !errors.Is(err, ErrCorruptFrame) {
			t.Fatalf("version %#x: %v", v, err)
		}
	}
	if _, _, _, err := decodeEnvelope(env[:len(env)-len("payload")-1]); !errors.Is(err, ErrCorruptFrame) {
		t.Fatalf("short time field: %v", err)
	}
}

// ensure that codec and level settings parse and bad ones are refused.
func TestParseCodecAndLevel(t *testing.T) {
	for s, want := range map[string]Codec{"": CodecNone, "none": CodecNone, "zstd": CodecZstd} {
		if c, err := ParseCodec(s); err != nil || c != want {
			t.Fatalf("ParseCodec(%q) = %v, %v", s, c, err)
		}
	}
	for _, s := range []string{"fastest", "default", "better", "best"} {
		if l, err := ParseLevel(s); err != nil || l.String() != s {
			t.Fatalf("ParseLevel(%q) = %v, %v", s, l, err)
		}
	}
	if _, err := ParseCodec("lz4"); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("ParseCodec(lz4): %v", err)
	}
	if _, err := ParseLevel("max"); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("ParseLevel(max): %v", err)
	}
}

// ensure that a drain is cut into frames whose inner bytes stay within the
// split size, a record larger than it alone in its frame.
func TestSplitFrames(t *testing.T) {
	cases := []struct {
		ends  []int
		limit int
		want  []int
	}{
		{[]int{10, 20, 30}, 100, []int{3}},
		{[]int{10, 20, 30}, 20, []int{2, 3}},
		{[]int{10, 20, 30}, 10, []int{1, 2, 3}},
		{[]int{50, 60, 200, 210}, 40, []int{1, 2, 3, 4}},
		{[]int{5}, 1, []int{1}},
	}
	for _, c := range cases {
		got := splitFrames(nil, c.ends, c.limit)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("splitFrames(%v, %d) = %v, want %v", c.ends, c.limit, got, c.want)
		}
		start := 0
		for _, end := range got {
			from := 0
			if start > 0 {
				from = c.ends[start-1]
			}
			if end-start > 1 && c.ends[end-1]-from > c.limit {
				t.Errorf("run [%d,%d) of %v holds %d bytes > %d", start, end, c.ends, c.ends[end-1]-from, c.limit)
			}
			start = end
		}
	}
}

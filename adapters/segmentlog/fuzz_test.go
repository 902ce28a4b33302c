package segmentlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/narad/narad/domain"
)

var rewriteSeeds = flag.Bool("rewrite-seeds", false, "rewrite the fuzz seed corpora under testdata/fuzz")

// FuzzFrameDecode: no input panics or allocates past the caps; a frame that
// decodes holds exactly its header's records, numbered from its base.
func FuzzFrameDecode(f *testing.F) {
	for _, s := range frameSeeds(f) {
		f.Add(s.data)
	}
	cs := testCodecs(f, CodecNone)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrameDecode(t, data, cs)
		if len(data) >= frameHeaderBytes { // again with a valid CRC, to reach the payload parser
			fixed := bytes.Clone(data)
			binary.BigEndian.PutUint32(fixed[frameCRCOff:], frameCRC(fixed, fixed[frameHeaderBytes:]))
			checkFrameDecode(t, fixed, cs)
		}
	})
}

func checkFrameDecode(t *testing.T, data []byte, cs *codecSet) {
	fr, err := decodeFrame(data, cs)
	if err != nil {
		if !errors.Is(err, ErrCorruptFrame) {
			t.Fatalf("decode error %v is not ErrCorruptFrame", err)
		}
		return
	}
	h, _ := parseFrameHeader(data)
	if len(fr.recs) != int(h.count) || fr.base != h.base {
		t.Fatalf("decoded %d records from %d, header says %d from %d", len(fr.recs), fr.base, h.count, h.base)
	}
	again, err := decodeFrame(encodeTestFrame(t, h.codec(), h.base, fr.recs), cs)
	if err != nil || len(again.recs) != len(fr.recs) {
		t.Fatalf("re-encoded frame: %v", err)
	}
	for i, r := range again.recs {
		w := fr.recs[i]
		if r.Offset != w.Offset || r.CommittedAtMs != w.CommittedAtMs || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Payload, w.Payload) {
			t.Fatalf("record %d changed on re-encode", i)
		}
	}
}

// FuzzEnvelopeDecode: no input panics; an envelope that decodes re-encodes
// to one that decodes to the same key, time and payload.
func FuzzEnvelopeDecode(f *testing.F) {
	for _, s := range envelopeSeeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		key, ms, payload, err := decodeEnvelope(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptFrame) {
				t.Fatalf("decode error %v is not ErrCorruptFrame", err)
			}
			return
		}
		if len(key)+len(payload)+envelopeMinBytes > len(data) {
			t.Fatalf("key %d + payload %d bytes from a %d-byte envelope", len(key), len(payload), len(data))
		}
		k2, ms2, p2, err := decodeEnvelope(appendEnvelope(nil, key, ms, payload))
		if err != nil || ms2 != ms || !bytes.Equal(k2, key) || !bytes.Equal(p2, payload) {
			t.Fatalf("re-encoded envelope differs: %v", err)
		}
	})
}

type seed struct {
	name string // valid-* decodes, invalid-* does not
	data []byte
}

func frameSeeds(t testing.TB) []seed {
	one := encodeTestFrame(t, CodecNone, 0, batch(1, 1))
	many := encodeTestFrame(t, CodecNone, 42, append(batch(2, 5), domain.Record{Payload: []byte{}}))
	legacy := bytes.Clone(one)
	legacy[frameHeaderBytes+recordLenBytes] = envelopeVersionLegacy
	binary.BigEndian.PutUint32(legacy[frameCRCOff:], frameCRC(legacy, legacy[frameHeaderBytes:]))
	return []seed{
		{"valid-none-one-record", one},
		{"valid-none-many-records", many},
		{"valid-zstd", encodeTestFrame(t, CodecZstd, 9, batch(3, 20))},
		{"invalid-crc", flipByte(many, len(many)-1)},
		{"invalid-magic", flipByte(one, 1)},
		{"invalid-truncated", many[:len(many)-3]},
		{"invalid-legacy-envelope", legacy},
		{"invalid-huge-stored-size", setU32(one, frameStoredSizeOff, 0xFFFFFFFF)},
		{"invalid-empty", nil},
	}
}

func envelopeSeeds() []seed {
	return []seed{
		{"valid-keyed", appendEnvelope(nil, []byte("user-7"), 1_700_000_000_000, []byte(`{"a":1}`))},
		{"valid-empty-key", appendEnvelope(nil, nil, 5, []byte{0, 1, 2})},
		{"valid-empty-payload", appendEnvelope(nil, []byte("k"), 0, nil)},
		{"invalid-legacy-version", append([]byte{envelopeVersionLegacy}, make([]byte, 12)...)},
		{"invalid-short", []byte{envelopeVersion, 0, 1, 2}},
		{"invalid-key-length", append([]byte{envelopeVersion, 0xff, 0xff, 0xff, 0xff, 0x0f}, make([]byte, 9)...)},
	}
}

// ensure that the committed seed corpora exist and that each seed decodes or
// fails as its name says (-rewrite-seeds regenerates them).
func TestFuzzSeeds(t *testing.T) {
	sets := map[string][]seed{"FuzzFrameDecode": frameSeeds(t), "FuzzEnvelopeDecode": envelopeSeeds()}
	for target, seeds := range sets {
		dir := filepath.Join("testdata", "fuzz", target)
		for _, s := range seeds {
			path := filepath.Join(dir, s.name)
			if *rewriteSeeds {
				writeSeed(t, path, s.data)
			}
			data := readSeed(t, path)
			var err error
			if target == "FuzzFrameDecode" {
				_, err = decodeFrame(data, testCodecs(t, CodecNone))
			} else {
				_, _, _, err = decodeEnvelope(data)
			}
			if valid := strings.HasPrefix(s.name, "valid-"); valid != (err == nil) {
				t.Errorf("%s/%s: decode error %v", target, s.name, err)
			}
		}
	}
}

func writeSeed(t *testing.T, path string, data []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readSeed(t *testing.T, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("seed corpus: %v (run with -rewrite-seeds)", err)
	}
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a go fuzz v1 file", path)
	}
	lit := strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")")
	s, err := strconv.Unquote(lit)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return []byte(s)
}

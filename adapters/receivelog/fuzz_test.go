package receivelog

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/narad/narad/domain/deadletter"
)

// FuzzDecode feeds arbitrary bytes to the frame decoder: it must never
// panic, every record it answers must be Valid, and those records must
// encode back to exactly the prefix it accepted.
func FuzzDecode(f *testing.F) {
	good := encodeFrames(nil, everyKind())
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(bytes.Clone(good), 0, 0, 0))
	f.Add([]byte{})
	f.Add(make([]byte, frameHeaderBytes))
	f.Add(frameOf([]byte{byte(deadletter.KindCount), 0x80, 0x00, 1, 0})) // non-minimal offset
	f.Add(frameOf([]byte{byte(deadletter.KindCount), 5, 1, 0, 7}))       // a trailing byte
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, good := decodeFrames(b)
		if good < 0 || good > int64(len(b)) {
			t.Fatalf("good end %d of %d bytes", good, len(b))
		}
		for i, r := range recs {
			if !r.Valid() {
				t.Fatalf("record %d is not valid: %+v", i, r)
			}
		}
		if out := encodeFrames(nil, recs); !bytes.Equal(out, b[:good]) {
			t.Fatalf("%d records re-encode to %d bytes, not the %d accepted", len(recs), len(out), good)
		}
	})
}

// frameOf wraps body in a frame with a correct length and checksum.
func frameOf(body []byte) []byte {
	out := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
	return append(out, body...)
}

// ensure that frames with a sound checksum but a body that is not exactly
// one valid record end the decode, and that a frame over the length cap is
// refused before its body is read.
func TestDecodeRefusesInexactBodies(t *testing.T) {
	ok := frameOf([]byte{byte(deadletter.KindCount), 5, 1, 0})
	if recs, good := decodeFrames(ok); len(recs) != 1 || recs[0] != count(5, 1) || good != int64(len(ok)) {
		t.Fatalf("a sound frame: %v, %d", recs, good)
	}
	for name, body := range map[string][]byte{
		"empty body":           {},
		"unknown kind":         {9, 5, 1, 0},
		"trailing byte":        {byte(deadletter.KindCount), 5, 1, 0, 0},
		"non-minimal offset":   {byte(deadletter.KindCount), 0x85, 0x00, 1, 0},
		"count over uint32":    append(binary.AppendUvarint([]byte{byte(deadletter.KindIntent), 5}, 1<<32), 0),
		"offset over int64":    append(binary.AppendUvarint([]byte{byte(deadletter.KindCount)}, 1<<63), 1, 0),
		"reason past the body": {byte(deadletter.KindReason), 5, 0, 4, 'a', 'b'},
		"reason on a count":    {byte(deadletter.KindCount), 5, 1, 1, 'a'},
		"zero count":           {byte(deadletter.KindCount), 5, 0, 0},
		"truncated varint":     {byte(deadletter.KindCount), 0x80},
	} {
		b := append(bytes.Clone(ok), frameOf(body)...)
		if recs, good := decodeFrames(b); len(recs) != 1 || good != int64(len(ok)) {
			t.Errorf("%s: decoded %d records, good end %d, want 1 and %d", name, len(recs), good, len(ok))
		}
	}
	long := binary.BigEndian.AppendUint32(nil, frameBodyMaxBytes+1)
	long = append(long, make([]byte, 4+frameBodyMaxBytes+1)...)
	if recs, good := decodeFrames(long); len(recs) != 0 || good != 0 {
		t.Fatalf("a frame over the cap: %v, %d", recs, good)
	}
	longest := reason(1<<63-1, string(make([]byte, deadletter.ReasonBytesMax)))
	if n := len(appendFrame(nil, longest)) - frameHeaderBytes; n > frameBodyMaxBytes {
		t.Fatalf("the longest valid body is %d bytes, over the cap of %d", n, frameBodyMaxBytes)
	}
}

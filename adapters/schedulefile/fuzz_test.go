package schedulefile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the frame scanner and to Open, as
// they are and reframed (read as frame bodies, each given a sound header,
// so the fuzzer gets past the checksum to the bodies and the protocol).
// Neither may panic; the good end must lie within the bytes at a frame
// boundary; every accepted frame must re-encode to exactly the bytes it
// was read from; and Open must answer the scan's records not fired, cut
// the file to the good end, and read each back as its frame holds it.
func FuzzDecode(f *testing.F) {
	two := append(batchFrames(batchA...), appendFiredFrame(nil, []uint32{1, 1})...)
	two = append(two, batchFrames(batchB...)...)
	for _, seed := range [][]byte{
		two,
		two[:len(two)-1],
		append(bytes.Clone(two), 0, 0, 0),
		{},
		make([]byte, frameHeaderBytes),
		recordFrames(batchC...), // no commit
		append(appendFiredFrame(nil, []uint32{0}), batchFrames(batchA...)...),           // fired first
		frameOf(append([]byte{kindRecord, 0, 0, 0, 0, 0, 0, 0, 1}, 0x80, 0x00, 1, 'p')), // non-minimal
	} {
		f.Add(seed)
		f.Add(unframe(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		checkDecode(t, reframe(b))
	})
}

// reframe reads b as frame bodies, each a length byte and up to that many
// bytes, and wraps each in a frame with a sound length and checksum.
func reframe(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		n := min(int(b[0]), len(b)-1)
		out = append(out, frameOf(b[1:1+n])...)
		b = b[1+n:]
	}
	return out
}

// unframe is reframe's inverse for whole frames with bodies under 256
// bytes, so seeds reach the fuzzer in both shapes; it stops at any other.
func unframe(b []byte) []byte {
	var out []byte
	for len(b) >= frameHeaderBytes {
		n := binary.BigEndian.Uint32(b)
		if n > 255 || uint64(len(b)-frameHeaderBytes) < uint64(n) {
			break
		}
		out = append(append(out, byte(n)), b[frameHeaderBytes:frameHeaderBytes+n]...)
		b = b[frameHeaderBytes+n:]
	}
	return out
}

// checkDecode scans b frame by frame and checks the scan, then Open.
func checkDecode(t *testing.T, b []byte) {
	s, tl := newScanner(bytes.NewReader(b), int64(len(b))), &tally{}
	var again []byte
	for {
		fr, pos, n, ok, err := s.next()
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if pos != int64(len(again)) {
			t.Fatalf("a frame at %d after %d bytes of frames", pos, len(again))
		}
		if !ok || !tl.add(fr, pos, n) {
			break
		}
		again = appendFrame(again, fr)
		if !bytes.Equal(again, b[:len(again)]) {
			t.Fatalf("the frame at %d (kind %d) re-encodes to other bytes", pos, fr.kind)
		}
	}
	if tl.good < 0 || tl.good > int64(len(again)) {
		t.Fatalf("good end %d, frames end at %d of %d bytes", tl.good, len(again), len(b))
	}
	for _, e := range tl.records {
		if e.Pos+int64(e.Size) > tl.good {
			t.Fatalf("record %d ends at %d, past the good end %d", e.Ordinal, e.Pos+int64(e.Size), tl.good)
		}
	}
	checkOpen(t, b, tl)
}

// checkOpen writes b to a bucket file and checks Open against tl.
func checkOpen(t *testing.T, b []byte, tl *tally) {
	mem := newMem(t)
	writeFile(t, mem, b)
	bk, entries, err := Open(mem, bucketPath, false)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer bk.Close()
	if want := tl.pending(); !slices.Equal(entries, want) {
		t.Fatalf("Open answers %v, the scan %v", entries, want)
	}
	if bk.Size() != tl.good || fileSize(t, mem) != tl.good || bk.Records() != len(tl.records) {
		t.Fatalf("Size %d, file %d bytes, %d records; want %d bytes, %d records", bk.Size(), fileSize(t, mem), bk.Records(), tl.good, len(tl.records))
	}
	for _, e := range entries {
		got, err := bk.Read(e)
		if err != nil {
			t.Fatalf("read %+v: %v", e, err)
		}
		fr, _, _ := decodeFrame(b[e.Pos : e.Pos+int64(e.Size)])
		if !bytes.Equal(got.Key, fr.key) || !bytes.Equal(got.Payload, fr.payload) || (len(fr.key) == 0) != (got.Key == nil) {
			t.Fatalf("read %+v: %+v", e, got)
		}
	}
}

// appendFrame re-encodes a decoded frame with the writer's encoders.
func appendFrame(dst []byte, f frame) []byte {
	switch f.kind {
	case kindRecord:
		return appendRecordFrame(dst, f.deliverAtMs, f.key, f.payload)
	case kindCommit:
		return appendCommitFrame(dst, f.count)
	default:
		return appendFiredFrame(dst, slices.Collect(f.firedOrdinals()))
	}
}

// frameOf wraps body in a frame with a sound length and checksum.
func frameOf(body []byte) []byte {
	return append(append(bigEndian32(uint32(len(body))), bigEndian32(crc32.Checksum(body, castagnoli))...), body...)
}

func bigEndian32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

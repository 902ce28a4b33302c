package quicpeer

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// ensure that every frame type round-trips through the encoder and decoder.
func TestFrameRoundTrip(t *testing.T) {
	for _, typ := range []byte{typeError, typePing, typePong, typeRequest, typeReply, typeAuth, typeCancel} {
		in := frame{Type: typ, RequestID: 0x0102030405060708, Payload: []byte("payload")}
		b, err := appendFrame(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != frameHeaderBytes+7 || !bytes.Equal(b[:4], []byte("NRS1")) {
			t.Fatalf("encoding % x", b)
		}
		out, err := readFrame(bytes.NewReader(b), framePayloadMaxBytes)
		if err != nil || out.Type != in.Type || out.RequestID != in.RequestID || !bytes.Equal(out.Payload, in.Payload) {
			t.Fatalf("type %d: got %+v, %v", typ, out, err)
		}
	}
}

// ensure that the encoder refuses what the decoder would refuse.
func TestAppendFrameRefuses(t *testing.T) {
	if _, err := appendFrame(nil, frame{Type: typeReply, Payload: make([]byte, framePayloadMaxBytes+1)}); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("oversized: %v", err)
	}
	if _, err := appendFrame(nil, frame{Type: 42}); !errors.Is(err, ErrBadFrame) {
		t.Errorf("unknown type: %v", err)
	}
}

// ensure that each kind of corrupt header is refused with a clear sentinel,
// and a length above the cap is refused before any payload byte is read.
func TestReadFrameRefusesCorruptHeaders(t *testing.T) {
	valid := header(typeRequest, 1, 3)
	mutate := func(i int, v byte) []byte {
		b := append([]byte(nil), valid...)
		b[i] = v
		return append(b, 1, 2, 3)
	}
	cases := []struct {
		name string
		in   []byte
		cap  int
		want error
	}{
		{"bad_magic", mutate(0, 'X'), framePayloadMaxBytes, ErrBadFrame},
		{"bad_version", mutate(4, 2), framePayloadMaxBytes, ErrBadFrame},
		{"unknown_type", mutate(5, 1), framePayloadMaxBytes, ErrBadFrame},
		{"reserved_set", mutate(7, 1), framePayloadMaxBytes, ErrBadFrame},
		{"truncated_header", valid[:11], framePayloadMaxBytes, ErrBadFrame},
		{"truncated_payload", append(header(typeReply, 1, 10), 1, 2), framePayloadMaxBytes, ErrBadFrame},
		{"over_16MiB", header(typeReply, 1, framePayloadMaxBytes+1), framePayloadMaxBytes, ErrFrameTooLarge},
		{"max_u32", header(typeReply, 1, 1<<32-1), framePayloadMaxBytes, ErrFrameTooLarge},
		{"proof_over_64_bytes", header(typeAuth, 0, proofPayloadMaxBytes+1), proofPayloadMaxBytes, ErrFrameTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readFrame(bytes.NewReader(tc.in), tc.cap)
			if !errors.Is(err, tc.want) {
				t.Fatalf("readFrame = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := readFrame(bytes.NewReader(nil), framePayloadMaxBytes); !errors.Is(err, io.EOF) {
		t.Errorf("empty stream: %v, want io.EOF", err)
	}
}

// ensure that a payload declaring 16 MiB but delivering 100 KiB costs a
// buffer of at most 256 KiB, not the declared length.
func TestLyingLengthDoesNotAllocateDeclaredSize(t *testing.T) {
	sent := make([]byte, 100<<10)
	buf, err := readPayload(bytes.NewReader(sent), framePayloadMaxBytes)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("readPayload = %v, want ErrUnexpectedEOF", err)
	}
	if cap(buf) > 256<<10 || len(buf) != len(sent) {
		t.Fatalf("buffer len %d cap %d for %d bytes sent", len(buf), cap(buf), len(sent))
	}
	full := bytes.Repeat([]byte{9}, 5<<20)
	got, err := readPayload(bytes.NewReader(full), len(full))
	if err != nil || !bytes.Equal(got, full) {
		t.Fatalf("5 MiB payload: %d bytes, %v", len(got), err)
	}
}

// ensure that error payloads round-trip and malformed ones are refused.
func TestErrorPayload(t *testing.T) {
	if msg, err := parseErrorPayload(errorPayload("no such lease")); err != nil || msg != "no such lease" {
		t.Fatalf("round trip: %q, %v", msg, err)
	}
	long := string(bytes.Repeat([]byte{'x'}, errorMessageMaxBytes+10))
	if msg, err := parseErrorPayload(errorPayload(long)); err != nil || len(msg) != errorMessageMaxBytes {
		t.Fatalf("long message: %d bytes, %v", len(msg), err)
	}
	for _, bad := range [][]byte{nil, {0}, {0, 5, 'a'}, {0, 0, 'a'}} {
		if _, err := parseErrorPayload(bad); !errors.Is(err, ErrBadFrame) {
			t.Errorf("payload % x: %v, want ErrBadFrame", bad, err)
		}
	}
}

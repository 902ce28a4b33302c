package quicpeer

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzFrameDecode ensures that the decoder never panics, never returns a
// payload above the cap, refuses with a package sentinel (or io.EOF on an
// empty input), and that whatever it accepts re-encodes to the bytes it read.
func FuzzFrameDecode(f *testing.F) {
	for _, typ := range []byte{typeError, typeRequest, typeReply, typeAuth} {
		b, _ := appendFrame(nil, frame{Type: typ, RequestID: 7, Payload: []byte{byte(OpProduce), 'h', 'i'}})
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, limit := range []int{framePayloadMaxBytes, proofPayloadMaxBytes} {
			fr, err := readFrame(bytes.NewReader(data), limit)
			if err != nil {
				if !errors.Is(err, ErrBadFrame) && !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, io.EOF) {
					t.Fatalf("unclassified error: %v", err)
				}
				continue
			}
			if len(fr.Payload) > limit {
				t.Fatalf("payload of %d bytes above the cap %d", len(fr.Payload), limit)
			}
			enc, err := appendFrame(nil, fr)
			if err != nil || !bytes.Equal(enc, data[:len(enc)]) {
				t.Fatalf("re-encoding % x differs from input % x (%v)", enc, data, err)
			}
			if fr.Type == typeError {
				_, _ = parseErrorPayload(fr.Payload)
			}
		}
	})
}

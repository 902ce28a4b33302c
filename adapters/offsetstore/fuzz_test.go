package offsetstore

import (
	"bytes"
	"testing"
)

// FuzzDecodeSlot feeds arbitrary bytes to the slot decoder: it must never
// panic, and a slot it accepts must encode back to exactly the same bytes.
func FuzzDecodeSlot(f *testing.F) {
	good := make([]byte, slotBytes)
	encodeSlot(good, record{seq: 2, offsets: offsets(5, 7, 9)})
	f.Add(good)
	f.Add(make([]byte, slotBytes))
	f.Add([]byte("NCOA"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeSlot(b)
		if err != nil {
			return
		}
		out := make([]byte, slotBytes)
		encodeSlot(out, r)
		if !bytes.Equal(out, b) {
			t.Fatalf("accepted slot does not re-encode to itself: %+v", r)
		}
	})
}

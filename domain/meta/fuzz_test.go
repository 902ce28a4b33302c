package meta_test

import (
	"bytes"
	"testing"

	"github.com/narad/narad/domain/meta"
)

// FuzzDecodeEvent feeds arbitrary bytes to the decoder. It must never panic;
// whatever it accepts must re-encode to bytes that decode to the same
// envelope, and applying it to empty views must not fail or panic.
func FuzzDecodeEvent(f *testing.F) {
	for _, env := range sampleEnvelopes() {
		b, err := meta.Encode(env)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		env, err := meta.Decode(in)
		if err != nil {
			return
		}
		b, err := meta.Encode(env)
		if err != nil {
			t.Fatalf("accepted %q but cannot re-encode: %v", in, err)
		}
		again, err := meta.Decode(b)
		if err != nil {
			t.Fatalf("re-encoded %q does not decode: %v", b, err)
		}
		if b2, err := meta.Encode(again); err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not canonical: %q then %q (%v)", b, b2, err)
		}
		if _, err := meta.Apply(meta.NewMemKV(), env); err != nil {
			t.Fatalf("apply on empty views: %v", err)
		}
	})
}

package offsetstore

import (
	"errors"
	"slices"
	"testing"

	"github.com/narad/narad/ports"
)

// ensure that a slot decodes to what was encoded, with the set sorted,
// deduplicated and cut at the frontier.
func TestSlotRoundTrip(t *testing.T) {
	t.Parallel()
	buf := make([]byte, slotBytes)
	encodeSlot(buf, record{seq: 7, offsets: offsets(10, 15, 12, 12, 9, 1<<40)})
	r, err := decodeSlot(buf)
	if err != nil {
		t.Fatal(err)
	}
	if r.seq != 7 || !sameOffsets(r.offsets, offsets(10, 12, 15, 1<<40)) {
		t.Fatalf("got %+v", r)
	}
}

// ensure that a set too large for a slot keeps its lowest offsets.
func TestSlotKeepsLowestOffsetsWhenFull(t *testing.T) {
	t.Parallel()
	var ahead []int64
	for i := range 10_000 {
		ahead = append(ahead, int64(10_000-i)*1000) // descending, 2-byte deltas
	}
	buf := make([]byte, slotBytes)
	encodeSlot(buf, record{seq: 1, offsets: ports.ConsumerOffsets{Committed: -1, AckedAhead: ahead}})
	r, err := decodeSlot(buf)
	if err != nil {
		t.Fatal(err)
	}
	got := r.offsets.AckedAhead
	if len(got) < 1000 || len(got) >= len(ahead) {
		t.Fatalf("kept %d of %d", len(got), len(ahead))
	}
	for i, o := range got {
		if o != int64(i+1)*1000 {
			t.Fatalf("offset %d is %d: not the lowest prefix", i, o)
		}
	}
}

// ensure that every single-bit flip and every torn prefix of a slot is refused.
func TestSlotDamageIsRefused(t *testing.T) {
	t.Parallel()
	good := make([]byte, slotBytes)
	encodeSlot(good, record{seq: 3, offsets: offsets(4, 6, 8)})
	for bit := 0; bit < slotBytes*8; bit += 7 {
		b := slices.Clone(good)
		b[bit/8] ^= 1 << (bit % 8)
		if _, err := decodeSlot(b); !errors.Is(err, errBadSlot) {
			t.Fatalf("bit %d flipped: %v", bit, err)
		}
	}
	for _, n := range []int{0, 1, 31, 512, slotBytes - 1} {
		b := make([]byte, slotBytes)
		copy(b, good[:n])
		if _, err := decodeSlot(b); !errors.Is(err, errBadSlot) {
			t.Fatalf("torn after %d bytes: %v", n, err)
		}
	}
}

// ensure that consumer.offset reads an empty or short file as no offset.
func TestOffsetFileDecoding(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		in   []byte
		want int64
	}{
		"empty":    {nil, -1},
		"short":    {[]byte{0, 0, 1}, -1},
		"value":    {encodeOffsetFile(41), 41},
		"none":     {encodeOffsetFile(-1), -1},
		"negative": {encodeOffsetFile(-7), -1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := decodeOffsetFile(c.in); got != c.want {
				t.Fatalf("got %d want %d", got, c.want)
			}
		})
	}
}

// ensure that VerifyAhead, what a partition move checks consumer.ahead
// with (internals.md §11.4), passes an image with one valid slot (the
// other torn) or nothing written, and refuses one with no valid slot.
func TestVerifyAhead(t *testing.T) {
	image := make([]byte, 2*slotBytes)
	if err := VerifyAhead(image); err != nil {
		t.Fatalf("nothing written: %v", err)
	}
	encodeSlot(image[:slotBytes], record{seq: 1, offsets: ports.ConsumerOffsets{Committed: 7, AckedAhead: []int64{9}}})
	image[slotBytes+5] = 0xff // the window, torn
	if err := VerifyAhead(image); err != nil {
		t.Fatalf("one valid slot: %v", err)
	}
	image[100] ^= 0xff
	if err := VerifyAhead(image); err == nil {
		t.Fatal("an image with no valid slot verified")
	}
}

package cursorfile

import (
	"bytes"
	"testing"

	"github.com/narad/narad/ports"
)

// FuzzDecode feeds arbitrary bytes to the cursor record parser: it must
// never panic, anything it accepts must be a valid cursor, and a CRC
// record it accepts in the fixed form must be exactly what encode writes.
func FuzzDecode(f *testing.F) {
	good, _ := encode(ports.FanoutCursor{Epoch: "0123456789abcdef", NextOffset: 42})
	f.Add(good)
	f.Add(good[:100])
	f.Add([]byte(`{"epoch":"0123456789abcdef","next_offset":7}`))
	f.Add([]byte(`{"crc":"00000000","epoch":"x","next_offset":1}`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decode(b)
		if err != nil {
			return
		}
		if validCursor(c) != nil {
			t.Fatalf("accepted an invalid cursor %+v", c)
		}
		rec, fixed := encode(c)
		again, err := decode(rec)
		if err != nil || again != c {
			t.Fatalf("re-encoded %+v decodes to %+v, %v", c, again, err)
		}
		if fixed && len(b) == recordBytes && bytes.HasPrefix(b, []byte(crcPrefix)) && bytes.HasSuffix(b, []byte("\n")) &&
			bytes.Equal(bytes.TrimRight(b[:recordBytes-1], " "), bytes.TrimRight(rec[:recordBytes-1], " ")) && !bytes.Equal(rec, b) {
			t.Fatalf("accepted fixed record differs from its encoding:\n%q\n%q", b, rec)
		}
	})
}

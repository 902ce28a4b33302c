package cursorfile

import (
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/narad/narad/ports"
)

// ensure that the record is byte for byte the §6.5 format: JSON with the
// crc first, space padding, a final newline, 256 bytes, and the CRC-32C of
// every byte after the crc field.
func TestRecordFormatIsExact(t *testing.T) {
	t.Parallel()
	rec, fixed := encode(ports.FanoutCursor{Epoch: "0123456789abcdef", NextOffset: 42})
	if !fixed || len(rec) != 256 {
		t.Fatalf("fixed %v, %d bytes", fixed, len(rec))
	}
	body := `,"epoch":"0123456789abcdef","next_offset":42}`
	rest := body + strings.Repeat(" ", 256-17-len(body)-1) + "\n"
	sum := crc32.Checksum([]byte(rest), crc32.MakeTable(crc32.Castagnoli))
	want := fmt.Sprintf(`{"crc":"%08x"`, sum) + rest
	if string(rec) != want {
		t.Fatalf("record\n%q\nwant\n%q", rec, want)
	}
	if rec[16] != '"' || rec[17] != ',' {
		t.Fatalf("crc field must end at byte 17: %q", rec[:18])
	}
}

// ensure that records round-trip, including the largest offset and an
// epoch too long to pad (written unpadded, still checksummed).
func TestRecordRoundTrip(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]ports.FanoutCursor{
		"zero":       {Epoch: "00000000000000aa", NextOffset: 0},
		"max_offset": {Epoch: "ffffffffffffffff", NextOffset: 1<<63 - 1},
		"long_epoch": {Epoch: strings.Repeat("e", 300), NextOffset: 9},
		"escaped":    {Epoch: "a\"b\\c\n", NextOffset: 3},
	} {
		rec, fixed := encode(c)
		if fixed != (len(rec) == recordBytes) || (name == "long_epoch") == fixed {
			t.Errorf("%s: fixed %v with %d bytes", name, fixed, len(rec))
		}
		got, err := decode(rec)
		if err != nil || got != c {
			t.Errorf("%s: decoded %+v %v", name, got, err)
		}
	}
}

// ensure that the pre-CRC format is still read (migration, §6.5).
func TestDecodeOldFormat(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"epoch":"0123456789abcdef","next_offset":17}`, "{\"epoch\":\"0123456789abcdef\",\"next_offset\":17}\n"} {
		got, err := decode([]byte(in))
		if err != nil || got != (ports.FanoutCursor{Epoch: "0123456789abcdef", NextOffset: 17}) {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
}

// ensure that damage anywhere after the crc field, a torn record, a bad
// crc spelling and malformed JSON are refused.
func TestDecodeRefusesDamage(t *testing.T) {
	t.Parallel()
	good, _ := encode(ports.FanoutCursor{Epoch: "0123456789abcdef", NextOffset: 42})
	for off := 0; off < len(good); off++ {
		b := []byte(string(good))
		b[off] ^= 0x01
		if _, err := decode(b); err == nil {
			t.Fatalf("a flipped bit at byte %d was accepted", off)
		}
	}
	upper := strings.Replace(string(good), string(good[8:16]), strings.ToUpper(string(good[8:16])), 1)
	cases := map[string]string{
		"torn":          string(good[:100]),
		"empty":         "",
		"crc_only":      `{"crc":"00000000"`,
		"upper_hex":     upper,
		"no_offset":     `{"epoch":"ab"}`,
		"negative":      `{"epoch":"ab","next_offset":-1}`,
		"empty_epoch":   `{"epoch":"","next_offset":1}`,
		"trailing_junk": `{"epoch":"ab","next_offset":1}x`,
		"not_json":      "hello",
	}
	for name, in := range cases {
		if _, err := decode([]byte(in)); err == nil {
			t.Errorf("%s: accepted %q", name, in)
		}
	}
	if _, err := decode(good[:100]); !errors.Is(err, errChecksum) {
		t.Errorf("torn record: %v, want a checksum error", err)
	}
}

// ensure that Verify, what a partition move checks a cursor file with
// (internals.md §11.4), passes a whole record and refuses one cut short
// or altered.
func TestVerify(t *testing.T) {
	rec, _ := encode(ports.FanoutCursor{Epoch: "00000000000000e7", NextOffset: 42})
	if err := Verify(rec); err != nil {
		t.Fatalf("a whole record: %v", err)
	}
	if err := Verify(rec[:len(rec)/2]); err == nil {
		t.Fatal("a record cut in half verified")
	}
	bad := append([]byte(nil), rec...)
	bad[len(bad)-3] ^= 1
	if err := Verify(bad); err == nil {
		t.Fatal("an altered record verified")
	}
}

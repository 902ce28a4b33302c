package cursorfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"unicode/utf8"

	"github.com/narad/narad/ports"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errChecksum marks a CRC record whose checksum does not match its bytes.
var errChecksum = errors.New("cursorfile: checksum mismatch")

// encode returns c's record: the fixed 256-byte form when its JSON fits,
// else the unpadded form (fixed false). c must be valid.
func encode(c ports.FanoutCursor) (rec []byte, fixed bool) {
	epoch, _ := json.Marshal(c.Epoch) // a string always marshals
	rec = make([]byte, 0, recordBytes)
	rec = append(rec, crcPrefix...)
	rec = append(rec, "00000000\""...)
	rec = append(rec, `,"epoch":`...)
	rec = append(rec, epoch...)
	rec = append(rec, `,"next_offset":`...)
	rec = strconv.AppendInt(rec, c.NextOffset, 10)
	rec = append(rec, '}')
	if fixed = len(rec) < recordBytes; fixed {
		for len(rec) < recordBytes-1 {
			rec = append(rec, padByte)
		}
	}
	rec = append(rec, '\n')
	copy(rec[len(crcPrefix):], crcHex(rec[crcFieldEnd:]))
	return rec, fixed
}

// record is the JSON of both formats; pointers tell a missing field from a
// zero one.
type record struct {
	CRC        *string `json:"crc"`
	Epoch      *string `json:"epoch"`
	NextOffset *int64  `json:"next_offset"`
}

// decode parses a cursor file: a CRC record (fixed or unpadded), checked,
// or the older {"epoch","next_offset"} record. Errors wrap errChecksum or
// describe the malformation.
func decode(b []byte) (ports.FanoutCursor, error) {
	isCRC := bytes.HasPrefix(b, []byte(crcPrefix))
	if isCRC {
		if err := checkCRC(b); err != nil {
			return ports.FanoutCursor{}, err
		}
	}
	r, err := parseJSON(b)
	if err != nil {
		return ports.FanoutCursor{}, err
	}
	switch {
	case r.Epoch == nil || r.NextOffset == nil:
		return ports.FanoutCursor{}, errors.New("cursorfile: record lacks epoch or next_offset")
	case isCRC != (r.CRC != nil):
		return ports.FanoutCursor{}, errors.New("cursorfile: crc field out of place")
	}
	c := ports.FanoutCursor{Epoch: *r.Epoch, NextOffset: *r.NextOffset}
	if err := validCursor(c); err != nil {
		return ports.FanoutCursor{}, err
	}
	return c, nil
}

// parseJSON reads one JSON object holding only the record's fields (a
// damaged field name is refused, not ignored), then only whitespace.
func parseJSON(b []byte) (record, error) {
	var r record
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("cursorfile: not a cursor record: %w", err)
	}
	if rest := b[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return r, errors.New("cursorfile: bytes after the record")
	}
	return r, nil
}

// checkCRC verifies a CRC record's checksum over [crcFieldEnd, len(b)).
func checkCRC(b []byte) error {
	if len(b) <= crcFieldEnd || b[crcFieldEnd-1] != '"' {
		return fmt.Errorf("cursorfile: truncated crc field: %w", errChecksum)
	}
	digits := b[len(crcPrefix) : len(crcPrefix)+crcHexDigits]
	if want := crcHex(b[crcFieldEnd:]); !bytes.Equal(digits, want) {
		return fmt.Errorf("cursorfile: crc %q, bytes sum to %s: %w", digits, want, errChecksum)
	}
	return nil
}

// crcHex spells the CRC-32C of covered as the crc field does: 8 lowercase
// hex digits, so encode and checkCRC agree byte for byte.
func crcHex(covered []byte) []byte {
	return fmt.Appendf(nil, "%0*x", crcHexDigits, crc32.Checksum(covered, castagnoli))
}

// validCursor checks what Store writes and decode accepts.
func validCursor(c ports.FanoutCursor) error {
	switch {
	case c.Epoch == "":
		return errors.New("cursorfile: empty epoch")
	case len(c.Epoch) > epochMaxLen:
		return fmt.Errorf("cursorfile: epoch of %d bytes (max %d)", len(c.Epoch), epochMaxLen)
	case !utf8.ValidString(c.Epoch):
		return errors.New("cursorfile: epoch is not UTF-8")
	case c.NextOffset < 0:
		return fmt.Errorf("cursorfile: negative next_offset %d", c.NextOffset)
	}
	return nil
}

// Verify checks that b is a whole, valid cursor file (a move's source
// checks a cursor file before shipping it, its destination before
// installing it: internals.md §11.4).
func Verify(b []byte) error {
	_, err := decode(b)
	return err
}

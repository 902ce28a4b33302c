package quicpeer

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Field encoding of the operations' payloads (internals.md §10.3): integers
// big-endian, strings and byte strings as u32 length + data, bools as one
// byte. Part of the wire format and must never change.

func appendU8(b []byte, v uint8) []byte   { return append(b, v) }
func appendU16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func appendU32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
func appendI32(b []byte, v int32) []byte  { return appendU32(b, uint32(v)) }
func appendI64(b []byte, v int64) []byte  { return appendU64(b, uint64(v)) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendBytes(b, v []byte) []byte {
	return append(appendU32(b, uint32(len(v))), v...)
}

func appendString(b []byte, v string) []byte {
	return append(appendU32(b, uint32(len(v))), v...)
}

// reader decodes fields from a payload it does not copy: byte strings it
// returns alias the payload. The first failure sticks; every later read
// returns zero values, so a decoder checks err once at the end.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format+": %w", append(args, ErrBadPayload)...)
	}
}

// take returns the next n bytes, or nil after marking truncation.
func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.fail("truncated %s: %d bytes wanted, %d left", what, n, len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8(what string) uint8 {
	if v := r.take(1, what); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u16(what string) uint16 {
	if v := r.take(2, what); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *reader) u32(what string) uint32 {
	if v := r.take(4, what); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if v := r.take(8, what); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func (r *reader) i32(what string) int32 { return int32(r.u32(what)) }
func (r *reader) i64(what string) int64 { return int64(r.u64(what)) }

func (r *reader) bool(what string) bool {
	switch v := r.u8(what); v {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail("%s: bool byte %d", what, v)
		return false
	}
}

// bytes returns a length-prefixed byte string aliasing the payload; an
// empty one is nil.
func (r *reader) bytes(what string) []byte {
	n := r.u32(what + " length")
	if n == 0 {
		return nil
	}
	if uint64(n) > math.MaxInt32 {
		r.fail("%s of %d bytes", what, n)
		return nil
	}
	return r.take(int(n), what)
}

// string returns a length-prefixed string of at most maxBytes.
func (r *reader) string(what string, maxBytes int) string {
	n := r.u32(what + " length")
	if uint64(n) > uint64(maxBytes) {
		r.fail("%s of %d bytes (cap %d)", what, n, maxBytes)
		return ""
	}
	return string(r.take(int(n), what))
}

// count reads a u32 element count and checks that at most maxCount elements
// of at least minBytes each could follow, so a lying count never sizes an
// allocation beyond what the payload can hold.
func (r *reader) count(what string, minBytes, maxCount int) int {
	n := r.u32(what)
	if r.err != nil {
		return 0
	}
	if uint64(n) > uint64(maxCount) || uint64(n)*uint64(minBytes) > uint64(len(r.b)) {
		r.fail("%s %d: at most %d, and %d bytes left hold at most %d", what, n, maxCount, len(r.b), len(r.b)/minBytes)
		return 0
	}
	return int(n)
}

// end refuses trailing bytes and returns the first failure.
func (r *reader) end(what string) error {
	if r.err == nil && len(r.b) > 0 {
		r.fail("%s: %d trailing bytes", what, len(r.b))
	}
	return r.err
}

package bootstrap

import (
	"bytes"
	"io"
	"net/textproto"
)

// The header meter's own bounds.
const (
	// meterLineKeptBytes is how much of a line the meter keeps: enough for
	// any Content-Length or Transfer-Encoding field and chunk-size line a
	// client sends; a longer one of those makes the meter stop counting on
	// that connection (net/http's looser limit still applies).
	meterLineKeptBytes = 128
	// overflowFillMarginBytes is how far past the cap the filler of an
	// oversized header block runs: well past net/http's own limit (the cap
	// plus 4 KiB of slack, counted from where it started reading the
	// request), and bounded all the same.
	overflowFillMarginBytes = 64 << 10
	// overflowFillByte continues the oversized line; it is never a newline.
	overflowFillByte = 'X'
)

// headMeter counts the header block of every request on one connection
// exactly, which net/http cannot: it allows 4 KiB of slack past
// MaxHeaderBytes, and on a reused connection the bytes it read ahead before
// the request began are not counted at all.
//
// What counts (http.max_header_bytes, api.md §0.1): every byte of the
// request head, from the first byte of the request line through the line
// feed of the empty line that ends the header fields, line terminators
// included; nothing of the body or a chunked body's trailer. A block of
// exactly the cap is accepted, one byte more is not.
//
// To know where each header block starts, the meter follows the framing
// net/http applies to requests (RFC 9112 §6): a Content-Length body, a
// chunked body (ignored below HTTP/1.1, as net/http does), or none. On a
// framing it cannot read whole, or one net/http refuses (it then closes the
// connection), the meter goes blind and counts nothing more on that
// connection.
type headMeter struct {
	maxBytes int64
	state    meterState
	left     int64 // bytes left of the body, or of the chunk's data
	fillLeft int64 // filler left to hand out after an overflow
	line     meterLine
	msg      headFraming
}

type meterState uint8

const (
	meterHead      meterState = iota // in a header block
	meterBody                        // in a Content-Length body
	meterChunkSize                   // in a chunk-size line
	meterChunkData                   // in a chunk's data
	meterChunkEnd                    // in the CRLF after a chunk's data
	meterTrailer                     // in a chunked body's trailer section
	meterOver                        // a header block went over the cap
	meterBlind                       // lost the framing: counting stops
)

// headFraming is what one header block says so far.
type headFraming struct {
	bytes        int64 // of the block
	lines        int
	beforeHTTP11 bool // the request line's version is below HTTP/1.1
	lengths      int  // Content-Length fields
	length       int64
	lengthBad    bool // a Content-Length that is not one same number
	encodings    int  // Transfer-Encoding fields
	chunked      bool // the last one says exactly "chunked"
	unsure       bool // a framing field the meter could not read whole
	lastWasFrame bool // the previous field was Content-Length or Transfer-Encoding
}

// meterLine is the current line: its first bytes, whether it outgrew them,
// and its last eight bytes other than CR (a request line's version).
type meterLine struct {
	kept [meterLineKeptBytes]byte
	n    int
	long bool
	tail uint64
}

// add appends b, a piece of the line without its line feed.
func (l *meterLine) add(b []byte) {
	k := copy(l.kept[l.n:], b)
	l.n += k
	l.long = l.long || k < len(b)
	var low uint64 // the last (up to) eight bytes of b other than CR
	got := 0
	for j := len(b) - 1; j >= 0 && got < 8; j-- {
		if b[j] != '\r' {
			low |= uint64(b[j]) << (8 * got)
			got++
		}
	}
	if got == 8 {
		l.tail = low
	} else {
		l.tail = l.tail<<(8*got) | low
	}
}

func (l *meterLine) reset() { l.n, l.long, l.tail = 0, false, 0 }

// raw is the kept bytes, without the line feed.
func (l *meterLine) raw() []byte { return l.kept[:l.n] }

// text is the kept bytes without a final CR.
func (l *meterLine) text() []byte {
	if l.n > 0 && l.kept[l.n-1] == '\r' {
		return l.kept[:l.n-1]
	}
	return l.kept[:l.n]
}

// versionBefore11 reports whether a request line whose last eight bytes
// are tail ends in a version "HTTP/M.m" below 1.1. net/http ignores
// Transfer-Encoding there; it refuses a line ending otherwise.
func versionBefore11(tail uint64) bool {
	const prefix = uint64('H')<<24 | uint64('T')<<16 | uint64('T')<<8 | uint64('P')
	b := func(i uint) byte { return byte(tail >> (8 * (7 - i))) } // byte i of the eight
	if tail>>32 != prefix || b(4) != '/' || b(6) != '.' {
		return false
	}
	major, minor := b(5)-'0', b(7)-'0'
	return major < 1 || (major == 1 && minor < 1)
}

func newHeadMeter(maxBytes int64) *headMeter { return &headMeter{maxBytes: maxBytes} }

func (m *headMeter) over() bool { return m.state == meterOver }

// feed follows p, read from the client, and returns how many of its bytes
// lie within the cap: len(p) unless a header block went over in p.
func (m *headMeter) feed(p []byte) int {
	for i := 0; i < len(p); {
		switch m.state {
		case meterBlind:
			return len(p)
		case meterBody, meterChunkData:
			k := min(int64(len(p)-i), m.left)
			m.left -= k
			i += int(k)
			if m.left == 0 && m.state == meterBody {
				m.startHead()
			} else if m.left == 0 {
				m.state = meterChunkEnd
			}
		default: // in a line: take it up to its line feed at once
			piece, ended := p[i:], false
			if nl := bytes.IndexByte(piece, '\n'); nl >= 0 {
				piece, ended = piece[:nl], true
			}
			n := int64(len(piece))
			if ended {
				n++
			}
			if m.state == meterHead {
				if room := m.maxBytes - m.msg.bytes; n > room {
					m.line.add(piece[:room]) // the block up to its cap, as counted
					m.msg.bytes = m.maxBytes + 1
					m.state, m.fillLeft = meterOver, m.maxBytes+overflowFillMarginBytes
					return i + int(room)
				}
				m.msg.bytes += n
			}
			m.line.add(piece)
			i += int(n)
			if ended {
				m.lineEnd()
			}
		}
	}
	return len(p)
}

// fill hands out filler continuing an oversized header block, up to its
// bound; then the connection reads as cut short.
func (m *headMeter) fill(p []byte) (int, error) {
	if m.fillLeft <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := min(int64(len(p)), m.fillLeft)
	for i := range p[:n] {
		p[i] = overflowFillByte
	}
	m.fillLeft -= n
	return int(n), nil
}

func (m *headMeter) startHead() { m.state, m.msg = meterHead, headFraming{} }

// lineEnd acts on the line a line feed just ended.
func (m *headMeter) lineEnd() {
	switch m.state {
	case meterHead:
		m.headLine()
	case meterChunkSize:
		m.chunkSizeLine()
	case meterChunkEnd: // net/http wants exactly CRLF after a chunk's data
		m.state = meterChunkSize
		if string(m.line.raw()) != "\r" {
			m.state = meterBlind
		}
	case meterTrailer:
		if len(m.line.text()) == 0 {
			m.startHead()
		}
	}
	m.line.reset()
}

func (m *headMeter) headLine() {
	text, first := m.line.text(), m.msg.lines == 0
	m.msg.lines++
	switch {
	case first:
		m.msg.beforeHTTP11 = versionBefore11(m.line.tail)
	case len(text) == 0:
		m.endHead()
	case text[0] == ' ' || text[0] == '\t': // obs-fold: continues the previous field
		m.msg.unsure = m.msg.unsure || m.msg.lastWasFrame
	default:
		m.field(text)
	}
}

// field notes a Content-Length or Transfer-Encoding field; others pass.
func (m *headMeter) field(text []byte) {
	m.msg.lastWasFrame = false
	colon := bytes.IndexByte(text, ':')
	if colon < 0 {
		return
	}
	name, value := text[:colon], textproto.TrimBytes(text[colon+1:])
	switch {
	case asciiEqualFold(name, "content-length"):
		n, ok := parseDecimal(value)
		m.msg.lengthBad = m.msg.lengthBad || !ok || (m.msg.lengths > 0 && n != m.msg.length)
		m.msg.length = n
		m.msg.lengths++
	case asciiEqualFold(name, "transfer-encoding"):
		m.msg.encodings++
		m.msg.chunked = asciiEqualFold(value, "chunked")
	default:
		return
	}
	m.msg.lastWasFrame = true
	m.msg.unsure = m.msg.unsure || m.line.long
}

// endHead sets the body the header block announced, as net/http reads it.
func (m *headMeter) endHead() {
	f := m.msg
	switch {
	case f.unsure:
		m.state = meterBlind
	case f.encodings > 0 && !f.beforeHTTP11:
		m.state = meterBlind // net/http refuses all but one "chunked" and closes
		if f.encodings == 1 && f.chunked {
			m.state = meterChunkSize
		}
	case f.lengths > 0 && f.lengthBad:
		m.state = meterBlind
	case f.lengths > 0 && f.length > 0:
		m.state, m.left = meterBody, f.length
	default:
		m.startHead()
	}
}

// chunkSizeLine reads a chunk-size line as net/http does: CRLF-terminated,
// no other CR, extensions after ';' dropped, 1 to 16 hex digits.
func (m *headMeter) chunkSizeLine() {
	raw := m.line.raw()
	if m.line.long || len(raw) == 0 || bytes.IndexByte(raw, '\r') != len(raw)-1 {
		m.state = meterBlind
		return
	}
	size := raw[:len(raw)-1]
	for len(size) > 0 && (size[len(size)-1] == ' ' || size[len(size)-1] == '\t') {
		size = size[:len(size)-1]
	}
	if semi := bytes.IndexByte(size, ';'); semi >= 0 {
		size = size[:semi]
	}
	n, ok := parseHex(size)
	switch {
	case !ok:
		m.state = meterBlind
	case n == 0:
		m.state = meterTrailer
	default:
		m.state, m.left = meterChunkData, n
	}
}

// parseDecimal parses a Content-Length as net/http does (digits only, at
// most 2^63-1).
func parseDecimal(b []byte) (int64, bool) {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<63-1-uint64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return int64(n), len(b) > 0
}

// parseHex parses a chunk size of 1 to 16 hex digits that fits an int64.
func parseHex(b []byte) (int64, bool) {
	var n uint64
	for _, c := range b {
		d, ok := hexDigit(c)
		if !ok || n>>59 != 0 {
			return 0, false
		}
		n = n<<4 | uint64(d)
	}
	return int64(n), len(b) > 0 && n <= 1<<63-1
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// asciiEqualFold compares b and lower case-insensitively in ASCII only, as
// net/http does (no Unicode folding).
func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

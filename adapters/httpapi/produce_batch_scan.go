package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/narad/narad/application/produce"
)

// batchScanDepthMax is the payload nesting the fast batch scanner follows;
// deeper payloads go to the encoding/json decoder.
const batchScanDepthMax = 64

// batchScanner is the fast path of the batch decoder. It reads the body into
// one buffer as it parses, and understands only the plain shape clients send:
// {"messages":[{...},...]} with the five fields spelled exactly, each once,
// keys and encodings as plain printable-ASCII strings or null, partitions as
// integers, payloads as any JSON value but null. On anything else it stops
// early, and decodeBatch replays what it read into encoding/json, whose
// answer (and error text) is then the only one: the scanner refuses nothing
// itself. What it accepts decodes to exactly what encoding/json would give
// (FuzzBatchScanMatchesDecoder). Payloads point into the buffer, which holds
// the body once; a body it stops on early is buffered only up to there
// (story F49).
type batchScanner struct {
	src io.Reader
	buf []byte
	pos int
	end bool  // src answered io.EOF or an error: nothing more to read
	err error // what src answered last
}

// span is a value's position in the buffer; the buffer may move while the
// scan runs, so values are sliced out only at the end.
type span struct{ start, end int }

// scanWire is one message as scanned: spans of its string fields (start -1:
// absent or null) and of its payload.
type scanWire struct {
	key, keyEnc, payload, payloadEnc span
	partition                        int64
	hasPartition                     bool
}

func newBatchScanner(src io.Reader, declared int64) *batchScanner {
	size := bodyExactMaxBytes
	if declared > 0 && declared < bodyExactMaxBytes {
		size = int(declared) + 1 // one spare byte sees the end without growing
	}
	return &batchScanner{src: src, buf: make([]byte, 0, size)}
}

// replay is the whole body again: what the scan read, then the rest.
func (s *batchScanner) replay() io.Reader {
	return io.MultiReader(bytes.NewReader(s.buf), s.src)
}

// fill reads more of the body; false when there is nothing more.
func (s *batchScanner) fill() bool {
	if s.end {
		return false
	}
	if len(s.buf) == cap(s.buf) {
		grown := make([]byte, len(s.buf), cap(s.buf)*bodyGrowFactor)
		copy(grown, s.buf)
		s.buf = grown
	}
	n, err := s.src.Read(s.buf[len(s.buf):cap(s.buf)])
	s.buf = s.buf[:len(s.buf)+n]
	if err != nil {
		s.end, s.err = true, err
	}
	return n > 0 || !s.end
}

// peek returns the byte at the cursor, reading more if needed.
func (s *batchScanner) peek() (byte, bool) {
	for s.pos >= len(s.buf) {
		if !s.fill() {
			return 0, false
		}
	}
	return s.buf[s.pos], true
}

// skipSpace moves past JSON whitespace and returns the next byte.
func (s *batchScanner) skipSpace() (byte, bool) {
	for {
		c, ok := s.peek()
		if !ok || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return c, ok
		}
		s.pos++
	}
}

// expect consumes c after optional whitespace.
func (s *batchScanner) expect(c byte) bool {
	if got, ok := s.skipSpace(); !ok || got != c {
		return false
	}
	s.pos++
	return true
}

// literal consumes word exactly.
func (s *batchScanner) literal(word string) bool {
	for i := range len(word) {
		if c, ok := s.peek(); !ok || c != word[i] {
			return false
		}
		s.pos++
	}
	return true
}

// scan parses the whole body; ok is false when encoding/json must decide.
func (s *batchScanner) scan() ([]wireMessage, bool) {
	if !s.expect('{') || !s.expect('"') || !s.literal(`messages"`) || !s.expect(':') || !s.expect('[') {
		return nil, false
	}
	if c, ok := s.skipSpace(); !ok || c == ']' {
		return nil, false // an empty batch: let the decoder word the refusal
	}
	var scanned []scanWire
	for {
		if len(scanned) == produce.BatchMaxMessages {
			return nil, false
		}
		w, ok := s.message()
		if !ok {
			return nil, false
		}
		scanned = append(scanned, w)
		c, ok := s.skipSpace()
		if !ok {
			return nil, false
		}
		s.pos++
		if c == ']' {
			break
		}
		if c != ',' {
			return nil, false
		}
	}
	if !s.expect('}') {
		return nil, false
	}
	if _, more := s.skipSpace(); more || !errors.Is(s.err, io.EOF) {
		return nil, false
	}
	return s.wire(scanned), true
}

// message scans one element: an object of the five known fields.
func (s *batchScanner) message() (scanWire, bool) {
	w := scanWire{key: span{-1, -1}, keyEnc: span{-1, -1}, payload: span{-1, -1}, payloadEnc: span{-1, -1}}
	if !s.expect('{') {
		return w, false
	}
	if c, ok := s.skipSpace(); ok && c == '}' {
		s.pos++
		return w, true
	}
	seen := 0
	for {
		name, ok := s.fieldName()
		if !ok || seen&(1<<name) != 0 || !s.expect(':') {
			return w, false
		}
		seen |= 1 << name
		if !s.field(&w, name) {
			return w, false
		}
		c, ok := s.skipSpace()
		if !ok {
			return w, false
		}
		s.pos++
		if c == '}' {
			return w, true
		}
		if c != ',' {
			return w, false
		}
	}
}

// The fields of a message, as bit positions.
const (
	fieldKey = iota
	fieldKeyEncoding
	fieldPayload
	fieldPayloadEncoding
	fieldPartition
)

var fieldNames = [...]string{
	fieldKey: "key", fieldKeyEncoding: "key_encoding", fieldPayload: "payload",
	fieldPayloadEncoding: "payload_encoding", fieldPartition: "partition",
}

// fieldName scans a quoted field name spelled exactly as in the spec.
func (s *batchScanner) fieldName() (int, bool) {
	if !s.expect('"') {
		return 0, false
	}
	sp, ok := s.plainString()
	if !ok {
		return 0, false
	}
	name := s.buf[sp.start:sp.end]
	for i, n := range fieldNames {
		if string(name) == n {
			return i, true
		}
	}
	return 0, false
}

func (s *batchScanner) field(w *scanWire, name int) bool {
	c, ok := s.skipSpace()
	if !ok {
		return false
	}
	switch name {
	case fieldPayload:
		if c == 'n' {
			return false // a null payload: the decoder knows what it means
		}
		start := s.pos
		if !s.value(0) {
			return false
		}
		w.payload = span{start, s.pos}
		return true
	case fieldPartition:
		if c == 'n' {
			return s.literal("null")
		}
		w.hasPartition = true
		w.partition, ok = s.integer()
		return ok
	}
	if c == 'n' {
		return s.literal("null")
	}
	s.pos++
	if c != '"' {
		return false
	}
	sp, ok := s.plainString()
	switch name {
	case fieldKey:
		w.key = sp
	case fieldKeyEncoding:
		w.keyEnc = sp
	default:
		w.payloadEnc = sp
	}
	return ok
}

// plainString scans the rest of a string (its opening quote consumed) made
// of printable ASCII without escapes, which encoding/json keeps byte for
// byte.
func (s *batchScanner) plainString() (span, bool) {
	start := s.pos
	for {
		c, ok := s.peek()
		switch {
		case !ok || c < 0x20 || c >= 0x7f || c == '\\':
			return span{}, false
		case c == '"':
			s.pos++
			return span{start, s.pos - 1}, true
		}
		s.pos++
	}
}

// integer scans -?(0|[1-9][0-9]*) of at most 18 digits, not followed by a
// fraction or exponent.
func (s *batchScanner) integer() (int64, bool) {
	neg := false
	if c, _ := s.peek(); c == '-' {
		neg = true
		s.pos++
	}
	var n int64
	digits := 0
	for {
		c, ok := s.peek()
		if !ok || c < '0' || c > '9' {
			break
		}
		if digits > 0 && n == 0 {
			return 0, false // a leading zero
		}
		n = n*10 + int64(c-'0')
		digits++
		s.pos++
	}
	if c, ok := s.peek(); digits == 0 || digits > 18 || (ok && (c == '.' || c == 'e' || c == 'E')) {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// wire turns the scanned spans into the decoder's wire form; payloads and
// the strings point into the buffer, which is never written again.
func (s *batchScanner) wire(scanned []scanWire) []wireMessage {
	out := make([]wireMessage, len(scanned))
	for i, sw := range scanned {
		w := &out[i]
		w.Key = s.str(sw.key)
		w.KeyEncoding = s.str(sw.keyEnc)
		w.PayloadEncoding = s.str(sw.payloadEnc)
		if sw.payload.start >= 0 {
			w.Payload = json.RawMessage(s.buf[sw.payload.start:sw.payload.end:sw.payload.end])
		}
		if sw.hasPartition {
			p := sw.partition
			w.Partition = &p
		}
	}
	return out
}

// base64Name is shared by every scanned encoding of "base64" (read only).
var base64Name = "base64"

func (s *batchScanner) str(sp span) *string {
	if sp.start < 0 {
		return nil
	}
	b := s.buf[sp.start:sp.end]
	if string(b) == base64Name {
		return &base64Name
	}
	v := string(b)
	return &v
}

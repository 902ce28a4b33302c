package httpapi

// value scans one JSON value (RFC 8259, as encoding/json's scanner accepts
// it: strings may hold any byte from 0x20 up); false on anything else or
// nesting past batchScanDepthMax.
func (s *batchScanner) value(depth int) bool {
	c, ok := s.skipSpace()
	switch {
	case !ok || depth > batchScanDepthMax:
		return false
	case c == '{':
		s.pos++
		return s.object(depth + 1)
	case c == '[':
		s.pos++
		return s.array(depth + 1)
	case c == '"':
		s.pos++
		return s.jsonString()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *batchScanner) object(depth int) bool {
	if c, ok := s.skipSpace(); ok && c == '}' {
		s.pos++
		return true
	}
	for {
		if !s.expect('"') || !s.jsonString() || !s.expect(':') || !s.value(depth) {
			return false
		}
		if done, ok := s.listNext('}'); !ok || done {
			return ok
		}
	}
}

func (s *batchScanner) array(depth int) bool {
	if c, ok := s.skipSpace(); ok && c == ']' {
		s.pos++
		return true
	}
	for {
		if !s.value(depth) {
			return false
		}
		if done, ok := s.listNext(']'); !ok || done {
			return ok
		}
	}
}

// listNext consumes the ',' between members or the closing byte.
func (s *batchScanner) listNext(closing byte) (done, ok bool) {
	c, ok := s.skipSpace()
	if !ok || (c != ',' && c != closing) {
		return false, false
	}
	s.pos++
	return c == closing, true
}

// jsonString scans the rest of a string, its opening quote consumed.
func (s *batchScanner) jsonString() bool {
	for {
		s.skipPlain()
		c, ok := s.peek()
		if !ok || c < 0x20 {
			return false
		}
		s.pos++
		switch c {
		case '"':
			return true
		case '\\':
			if !s.escape() {
				return false
			}
		}
	}
}

// skipPlain moves past the buffered string bytes that need no attention:
// neither a quote, a backslash nor a control byte.
func (s *batchScanner) skipPlain() {
	buf, i := s.buf, s.pos
	for i < len(buf) {
		if c := buf[i]; c < 0x20 || c == '"' || c == '\\' {
			break
		}
		i++
	}
	s.pos = i
}

func (s *batchScanner) escape() bool {
	c, ok := s.peek()
	if !ok {
		return false
	}
	s.pos++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		for range 4 {
			h, ok := s.peek()
			if !ok || !isHex(h) {
				return false
			}
			s.pos++
		}
		return true
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; what follows
// is the caller's to check.
func (s *batchScanner) number() bool {
	if c, _ := s.peek(); c == '-' {
		s.pos++
	}
	c, ok := s.peek()
	switch {
	case !ok:
		return false
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return false
	}
	if c, ok := s.peek(); ok && c == '.' {
		s.pos++
		if s.digits() == 0 {
			return false
		}
	}
	if c, ok := s.peek(); ok && (c == 'e' || c == 'E') {
		s.pos++
		if c, ok := s.peek(); ok && (c == '+' || c == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *batchScanner) digits() int {
	n := 0
	for {
		c, ok := s.peek()
		if !ok || c < '0' || c > '9' {
			return n
		}
		s.pos++
		n++
	}
}

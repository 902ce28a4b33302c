package domain

// validJSON reports whether b is exactly one JSON text with optional
// surrounding whitespace, with the same answer as encoding/json.Valid (a
// fuzz test holds them equal) but in one allocation-free pass: rendering
// every delivered payload asks this question.
func validJSON(b []byte) bool {
	var open [32]byte
	stack := open[:0] // open containers: '{' or '['; empty for a scalar
	i := skipSpace(b, 0)
	for {
		var ok bool
		if i, stack, ok = scanValue(b, i, stack); !ok {
			return false
		}
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			switch {
			case b[i] == ',':
				i = skipSpace(b, i+1)
				if top == '{' {
					if i, ok = scanKey(b, i); !ok {
						return false
					}
				}
			case (top == '{' && b[i] == '}') || (top == '[' && b[i] == ']'):
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// scanValue scans one value at i and returns the stack of open
// containers. An opening bracket is pushed and, when the container is not
// empty, scanning continues at its first member; an empty container is
// consumed whole. The stack is passed and returned by value so that the
// caller's array backs it and nothing is allocated for shallow nesting.
func scanValue(b []byte, i int, stack []byte) (int, []byte, bool) {
	for {
		if i >= len(b) {
			return i, stack, false
		}
		var ok bool
		switch c := b[i]; {
		case c == '{':
			j := skipSpace(b, i+1)
			if j < len(b) && b[j] == '}' {
				return j + 1, stack, true
			}
			stack = append(stack, '{')
			if i, ok = scanKey(b, j); !ok {
				return i, stack, false
			}
			continue
		case c == '[':
			j := skipSpace(b, i+1)
			if j < len(b) && b[j] == ']' {
				return j + 1, stack, true
			}
			stack, i = append(stack, '['), j
			continue
		case c == '"':
			i, ok = scanString(b, i)
		case c == '-' || (c >= '0' && c <= '9'):
			i, ok = scanNumber(b, i)
		case c == 't':
			i, ok = scanLiteral(b, i, "true")
		case c == 'f':
			i, ok = scanLiteral(b, i, "false")
		case c == 'n':
			i, ok = scanLiteral(b, i, "null")
		}
		return i, stack, ok
	}
}

// scanKey scans `"key" :` and the whitespace after the colon.
func scanKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return i, false
	}
	i, ok := scanString(b, i)
	if !ok {
		return i, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, false
	}
	return skipSpace(b, i+1), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// scanString scans a string starting at its opening quote. Like
// encoding/json's scanner it checks escapes and control characters, not
// UTF-8.
func scanString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

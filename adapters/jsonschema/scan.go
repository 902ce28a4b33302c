package jsonschema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// nestingExceeds reports whether doc opens more than limit arrays or objects
// inside each other. It reads bytes only (strings are skipped), so it is
// safe to run before decoding, on any input.
func nestingExceeds(doc []byte, limit int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range doc {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// exponentTooLarge finds a number in v whose decimal exponent is beyond
// ±NumberExponentMax.
func exponentTooLarge(v any) (json.Number, bool) {
	switch x := v.(type) {
	case json.Number:
		i := strings.IndexAny(string(x), "eE")
		if i < 0 {
			return "", false
		}
		e, err := strconv.Atoi(strings.TrimPrefix(string(x[i+1:]), "+"))
		if err != nil || e > NumberExponentMax || e < -NumberExponentMax {
			return x, true
		}
	case []any:
		for _, e := range x {
			if n, bad := exponentTooLarge(e); bad {
				return n, true
			}
		}
	case map[string]any:
		for _, e := range x {
			if n, bad := exponentTooLarge(e); bad {
				return n, true
			}
		}
	}
	return "", false
}

// dataKeywords hold instance data, not schemas: a "$ref" member inside them
// is a value, not a reference.
var dataKeywords = map[string]bool{"const": true, "enum": true, "default": true, "examples": true}

// outsideRef finds a "$ref" or "$dynamicRef" that leaves the document
// (anything but a "#..." fragment), wherever it sits in a schema.
func outsideRef(v any) (string, bool) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if r, ok := outsideRef(e); ok {
				return r, true
			}
		}
	case map[string]any:
		for k, e := range x {
			if dataKeywords[k] {
				continue
			}
			if s, isStr := e.(string); isStr && (k == "$ref" || k == "$dynamicRef") && !strings.HasPrefix(s, "#") {
				return s, true
			}
			if r, ok := outsideRef(e); ok {
				return r, true
			}
		}
	}
	return "", false
}

// cut shortens msg to MessageMaxBytes on a character boundary.
func cut(msg string) string {
	if len(msg) <= MessageMaxBytes {
		return msg
	}
	end := MessageMaxBytes
	for end > 0 && !isRuneStart(msg[end]) {
		end--
	}
	return msg[:end]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// flatten makes a multi-line library message one line, naming the
// document "topic-schema" instead of its internal URL.
func flatten(err error) string {
	msg := strings.ReplaceAll(err.Error(), baseURL, "topic-schema")
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

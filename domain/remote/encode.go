package remote

import (
	"encoding/base64"
	"encoding/json"
	"github.com/narad/narad/domain"
	"unicode/utf8"
)

// The fixed parts of a batch produce body and its messages (api.md §2.13.1).
const (
	batchOpen          = `{"messages":[`
	batchClose         = `]}`
	batchOverheadBytes = len(batchOpen) + len(batchClose)
	keyField           = `"key":`
	keyBase64Field     = `,"key_encoding":"base64"`
	payloadField       = `"payload":`
	payloadBase64Field = `,"payload_encoding":"base64"`
)

// Message is one record as the send path encodes it. ForceBase64 sends the
// payload as base64 even when it could go raw: the one retry of a raw
// payload the target refused (internals.md §7.3).
type Message struct {
	Key         []byte
	Payload     []byte
	ForceBase64 bool
}

// PayloadRaw reports whether payload goes raw, stored byte for byte on the
// target (internals.md §7.2 "Encoding"): exactly one JSON value, valid
// UTF-8, with no whitespace before or after it.
func PayloadRaw(payload []byte) bool {
	// json.Valid allows whitespace around the value, which edges excludes,
	// and it checks escapes but not UTF-8 inside strings.
	return edges(payload) && utf8.Valid(payload) && json.Valid(payload)
}

// edges reports whether p's first and last bytes can open and close one
// JSON value (so neither is whitespace). It keeps most non-JSON payloads
// (binary, text) away from json.Valid, which allocates its error.
func edges(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	first, last := p[0], p[len(p)-1]
	switch {
	case first == '{':
		return last == '}'
	case first == '[':
		return last == ']'
	case first == '"':
		return last == '"' && len(p) > 1
	case first == 't' || first == 'f':
		return last == 'e'
	case first == 'n':
		return last == 'l'
	case first == '-' || isDigit(first):
		return isDigit(last)
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// AppendMessage appends one batch produce message object to dst
// (internals.md §7.2 "Encoding", api.md §2.13.1):
// {"key":...,"key_encoding":"base64","payload":...,"payload_encoding":"base64"}.
// The key is left out when empty, goes as a JSON string when it is valid
// UTF-8 and as base64 otherwise; the payload goes raw when PayloadRaw holds
// and forceBase64 is false, as base64 otherwise. No partition is sent. It
// allocates nothing when dst has room for MessageLen bytes more, except for
// a payload that starts and ends like JSON but is not (json.Valid
// allocates its error).
func AppendMessage(dst []byte, key, payload []byte, forceBase64 bool) []byte {
	dst = append(dst, '{')
	if len(key) > 0 {
		dst = append(dst, keyField...)
		if utf8.Valid(key) {
			dst = domain.AppendJSONString(dst, key)
		} else {
			dst = appendBase64(dst, key)
			dst = append(dst, keyBase64Field...)
		}
		dst = append(dst, ',')
	}
	dst = append(dst, payloadField...)
	if !forceBase64 && PayloadRaw(payload) {
		dst = append(dst, payload...)
	} else {
		dst = appendBase64(dst, payload)
		dst = append(dst, payloadBase64Field...)
	}
	return append(dst, '}')
}

// MessageLen is the length AppendMessage appends for the same arguments.
func MessageLen(key, payload []byte, forceBase64 bool) int {
	n := len(`{}`) + len(payloadField)
	if len(key) > 0 {
		n += len(keyField) + len(`,`)
		if utf8.Valid(key) {
			n += domain.JSONStringLen(key)
		} else {
			n += base64Len(key) + len(keyBase64Field)
		}
	}
	if !forceBase64 && PayloadRaw(payload) {
		return n + len(payload)
	}
	return n + base64Len(payload) + len(payloadBase64Field)
}

// AppendBatch appends a whole batch produce body holding msgs in order.
func AppendBatch(dst []byte, msgs []Message) []byte {
	dst = append(dst, batchOpen...)
	for i, m := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendMessage(dst, m.Key, m.Payload, m.ForceBase64)
	}
	return append(dst, batchClose...)
}

// AppendEncodedBatch appends a batch produce body from messages already
// encoded by AppendMessage.
func AppendEncodedBatch(dst []byte, encoded [][]byte) []byte {
	dst = append(dst, batchOpen...)
	for i, m := range encoded {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m...)
	}
	return append(dst, batchClose...)
}

// BatchLen is the length of a batch body whose encoded messages have sizes.
func BatchLen(sizes []int) int {
	n := batchOverheadBytes
	for i, s := range sizes {
		if i > 0 {
			n++
		}
		n += s
	}
	return n
}

// AppendProbe appends the capability probe (internals.md §7.2 "Chunks"):
// ProbeMessages payload-less messages, which every target refuses without
// storing. ProbeCapacity reads the answer.
func AppendProbe(dst []byte) []byte {
	msgs := [ProbeMessages]Message{}
	return AppendBatch(dst, msgs[:])
}

// appendBase64 appends src as a JSON string of standard padded base64.
func appendBase64(dst, src []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, src)
	return append(dst, '"')
}

func base64Len(src []byte) int { return base64.StdEncoding.EncodedLen(len(src)) + len(`""`) }

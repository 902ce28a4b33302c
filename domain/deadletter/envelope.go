package deadletter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/narad/narad/domain"
)

// Letter is a message as it sits in a dead-letter topic: where it came
// from, how often it was received there, why its last nack said it failed,
// and its own key and payload, byte for byte.
type Letter struct {
	Topic        string
	Partition    int32
	Offset       int64
	TimestampS   int64 // the origin record's commit time, Unix seconds
	ReceiveCount uint32
	Reason       string
	Key          []byte
	Payload      []byte
}

// AppendLetter appends l's dead-letter payload to dst, a JSON object a
// consumer of the dead-letter topic reads as is (docs/api-extensions.md):
//
//	{"dead_letter":{"topic","partition","offset","timestamp","receive_count"[,"reason"]}
//	 [,"key"[,"key_encoding":"base64"]],"payload"[,"payload_encoding":"string"|"base64"]}
//
// A payload that is one JSON text with no surrounding space is spliced in
// verbatim, other UTF-8 is a JSON string marked "string", anything else
// base64, so ParseLetter gives back exactly the original bytes.
func AppendLetter(dst []byte, l Letter) []byte {
	dst = append(dst, `{"dead_letter":{"topic":`...)
	dst = domain.AppendJSONString(dst, l.Topic)
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(l.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, l.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, l.TimestampS, 10)
	dst = append(dst, `,"receive_count":`...)
	dst = strconv.AppendUint(dst, uint64(l.ReceiveCount), 10)
	if l.Reason != "" {
		dst = append(dst, `,"reason":`...)
		dst = domain.AppendJSONString(dst, l.Reason)
	}
	dst = append(dst, '}')
	if len(l.Key) > 0 {
		dst = append(dst, `,"key":`...)
		dst = appendBytes(dst, l.Key, "key_encoding", false)
	}
	dst = append(dst, `,"payload":`...)
	dst = appendBytes(dst, l.Payload, "payload_encoding", true)
	return append(dst, '}')
}

// appendBytes appends b as a JSON value: verbatim when asJSON allows and b
// is one JSON text with nothing around it, a string when it is UTF-8
// (marked "string" when asJSON, since a bare string then means JSON),
// else base64 with its encoding field.
func appendBytes(dst, b []byte, field string, asJSON bool) []byte {
	switch {
	case asJSON && spliceable(b):
		return append(dst, b...)
	case utf8.Valid(b):
		dst = domain.AppendJSONString(dst, b)
		if asJSON {
			dst = append(dst, `,"`+field+`":"string"`...)
		}
		return dst
	default:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, b)
		return append(dst, `","`+field+`":"base64"`...)
	}
}

// spliceable reports whether b can stand verbatim as a JSON value and be
// read back byte for byte.
func spliceable(b []byte) bool {
	return len(b) > 0 && utf8.Valid(b) && len(bytes.TrimSpace(b)) == len(b) && json.Valid(b)
}

type wireLetter struct {
	DeadLetter *struct {
		Topic        string `json:"topic"`
		Partition    int32  `json:"partition"`
		Offset       int64  `json:"offset"`
		Timestamp    int64  `json:"timestamp"`
		ReceiveCount uint32 `json:"receive_count"`
		Reason       string `json:"reason"`
	} `json:"dead_letter"`
	Key             *string         `json:"key"`
	KeyEncoding     string          `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
}

// ParseLetter reads a dead-letter payload AppendLetter wrote. Anything else
// is refused with an error wrapping domain.ErrInvalidArgument.
func ParseLetter(b []byte) (Letter, error) {
	var w wireLetter
	if err := json.Unmarshal(b, &w); err != nil {
		return Letter{}, fmt.Errorf("%w: not a dead letter: %w", domain.ErrInvalidArgument, err)
	}
	if w.DeadLetter == nil || w.Payload == nil {
		return Letter{}, fmt.Errorf("%w: not a dead letter: no dead_letter or payload field", domain.ErrInvalidArgument)
	}
	d := w.DeadLetter
	if err := domain.ValidateTopicName(d.Topic); err != nil || d.Partition < 0 || d.Offset < 0 {
		return Letter{}, fmt.Errorf("%w: dead letter names no valid origin", domain.ErrInvalidArgument)
	}
	l := Letter{Topic: d.Topic, Partition: d.Partition, Offset: d.Offset, TimestampS: d.Timestamp,
		ReceiveCount: d.ReceiveCount, Reason: d.Reason}
	var err error
	if w.Key != nil {
		if l.Key, err = decodeString(*w.Key, w.KeyEncoding); err != nil {
			return Letter{}, fmt.Errorf("%w: dead letter key: %w", domain.ErrInvalidArgument, err)
		}
	}
	if l.Payload, err = decodePayload(w.Payload, w.PayloadEncoding); err != nil {
		return Letter{}, fmt.Errorf("%w: dead letter payload: %w", domain.ErrInvalidArgument, err)
	}
	return l, nil
}

func decodePayload(raw json.RawMessage, encoding string) ([]byte, error) {
	if encoding == "" {
		return bytes.Clone(raw), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("payload_encoding %q wants a JSON string: %w", encoding, err)
	}
	return decodeString(s, encoding)
}

func decodeString(s, encoding string) ([]byte, error) {
	switch encoding {
	case "", "string":
		return []byte(s), nil
	case "base64":
		return base64.StdEncoding.DecodeString(s)
	}
	return nil, fmt.Errorf("unknown encoding %q", encoding)
}

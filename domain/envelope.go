package domain

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// Delivery is one message as a consumer receives it (api.md §2.14.1).
type Delivery struct {
	Topic     string
	Partition int32
	Record    Record
	// Handle is the lease's receipt handle; nil for a replay.
	Handle *ReceiptHandle
}

// AppendEnvelope appends d's JSON envelope to dst, fields in the order of
// api.md §2.14.1. The payload is spliced in verbatim when it is one valid
// JSON text, quoted when it is other UTF-8, and base64 with
// "payload_encoding":"base64" otherwise; a non-UTF-8 key likewise gets
// "key_encoding":"base64". Any stored bytes render: no poison pill (story F8).
func AppendEnvelope(dst []byte, d Delivery) []byte {
	dst = append(dst, `{"topic":`...)
	dst = AppendJSONString(dst, d.Topic)
	dst = append(dst, `,"partition":`...)
	dst = strconv.AppendInt(dst, int64(d.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, d.Record.Offset, 10)
	if len(d.Record.Key) > 0 {
		dst = appendKey(dst, d.Record.Key)
	}
	dst = appendPayload(dst, d.Record.Payload)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, d.Record.CommittedAtMs/1000, 10)
	if d.Handle != nil {
		dst = append(dst, `,"receipt_handle":"`...)
		dst = append(dst, d.Handle.String()...)
		dst = append(dst, '"')
	}
	return append(dst, '}')
}

func appendKey(dst, key []byte) []byte {
	dst = append(dst, `,"key":`...)
	if utf8.Valid(key) {
		return AppendJSONString(dst, key)
	}
	dst = appendBase64String(dst, key)
	return append(dst, `,"key_encoding":"base64"`...)
}

func appendPayload(dst, payload []byte) []byte {
	dst = append(dst, `,"payload":`...)
	switch {
	case validJSON(payload):
		return append(dst, payload...)
	case utf8.Valid(payload):
		return AppendJSONString(dst, payload)
	default:
		dst = appendBase64String(dst, payload)
		return append(dst, `,"payload_encoding":"base64"`...)
	}
}

func appendBase64String(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

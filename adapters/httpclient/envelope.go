package httpclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// encodingBase64 is the only encoding an envelope may name (api.md §2.14.1).
const encodingBase64 = "base64"

// Message is one decoded message envelope (api.md §2.14.1).
type Message struct {
	Topic     string
	Partition int
	Offset    int64
	// Key is the produce key, base64-decoded when the envelope said
	// key_encoding "base64" (then KeyBinary is true); nil without a key.
	Key       []byte
	KeyBinary bool
	// Payload is the envelope's payload exactly as the server sent it.
	Payload json.RawMessage
	// Binary is true when payload_encoding was "base64".
	Binary bool
	// Body is the message as bytes: the base64-decoded bytes for a binary
	// payload, the text of a JSON string payload, else the JSON text itself
	// (inner bytes verbatim; whitespace around the value is not kept).
	// (An envelope cannot tell stored plain text from a stored JSON string
	// literal; plain text is far more common, so a string gives its text.)
	Body []byte
	// Timestamp is the commit time on the owner, Unix seconds.
	Timestamp int64
	// ReceiptHandle is the lease token; empty for a replay.
	ReceiptHandle string
}

// wireEnvelope is the JSON shape of one envelope; pointers tell a missing
// field from a zero.
type wireEnvelope struct {
	Topic           string          `json:"topic"`
	Partition       *int            `json:"partition"`
	Offset          *int64          `json:"offset"`
	Key             *string         `json:"key"`
	KeyEncoding     string          `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
	Timestamp       int64           `json:"timestamp"`
	ReceiptHandle   string          `json:"receipt_handle"`
}

// DecodeEnvelope decodes one message envelope. Unknown fields are ignored;
// a missing partition, offset or payload, a negative partition or offset, an
// encoding other than "base64", or bad base64 are errors wrapping
// ErrMalformedReply.
func DecodeEnvelope(data []byte) (Message, error) {
	var w wireEnvelope
	if err := json.Unmarshal(data, &w); err != nil {
		return Message{}, fmt.Errorf("envelope: %w: %v", ErrMalformedReply, err)
	}
	return w.message()
}

func (w wireEnvelope) message() (Message, error) {
	switch {
	case w.Partition == nil || w.Offset == nil:
		return Message{}, fmt.Errorf("envelope: partition and offset required: %w", ErrMalformedReply)
	case *w.Partition < 0 || *w.Offset < 0:
		return Message{}, fmt.Errorf("envelope: negative partition or offset: %w", ErrMalformedReply)
	case len(w.Payload) == 0:
		return Message{}, fmt.Errorf("envelope: payload required: %w", ErrMalformedReply)
	}
	m := Message{Topic: w.Topic, Partition: *w.Partition, Offset: *w.Offset, Payload: w.Payload, Timestamp: w.Timestamp, ReceiptHandle: w.ReceiptHandle}
	var err error
	if m.Key, m.KeyBinary, err = decodeKey(w.Key, w.KeyEncoding); err != nil {
		return Message{}, err
	}
	if m.Body, m.Binary, err = decodePayload(w.Payload, w.PayloadEncoding); err != nil {
		return Message{}, err
	}
	return m, nil
}

func decodeKey(key *string, encoding string) ([]byte, bool, error) {
	switch {
	case encoding != "" && encoding != encodingBase64:
		return nil, false, fmt.Errorf("envelope: unknown key_encoding %q: %w", encoding, ErrMalformedReply)
	case key == nil:
		return nil, false, nil
	case encoding == "":
		return []byte(*key), false, nil
	}
	b, err := base64.StdEncoding.DecodeString(*key)
	if err != nil {
		return nil, false, fmt.Errorf("envelope: key: %w: %v", ErrMalformedReply, err)
	}
	return b, true, nil
}

func decodePayload(payload json.RawMessage, encoding string) ([]byte, bool, error) {
	if encoding != "" && encoding != encodingBase64 {
		return nil, false, fmt.Errorf("envelope: unknown payload_encoding %q: %w", encoding, ErrMalformedReply)
	}
	var s string
	isString := bytes.HasPrefix(bytes.TrimLeft(payload, " \t\r\n"), []byte(`"`)) && json.Unmarshal(payload, &s) == nil
	if encoding == "" {
		if isString {
			return []byte(s), false, nil
		}
		return bytes.Clone(payload), false, nil
	}
	if !isString {
		return nil, false, fmt.Errorf("envelope: base64 payload is not a JSON string: %w", ErrMalformedReply)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false, fmt.Errorf("envelope: payload: %w: %v", ErrMalformedReply, err)
	}
	return b, true, nil
}

// DecodeMessages decodes a consume answer: {"messages":[...]} when batch is
// true, one envelope otherwise. A batch answer without a "messages" member is
// read as one envelope, as the Go SDK does (api.md Appendix B.3).
func DecodeMessages(data []byte, batch bool) ([]Message, error) {
	if batch {
		var wrap struct {
			Messages *[]json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(data, &wrap); err != nil {
			return nil, fmt.Errorf("consume: %w: %v", ErrMalformedReply, err)
		}
		if wrap.Messages != nil {
			out := make([]Message, 0, len(*wrap.Messages))
			for i, raw := range *wrap.Messages {
				m, err := DecodeEnvelope(raw)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				out = append(out, m)
			}
			return out, nil
		}
	}
	m, err := DecodeEnvelope(data)
	if err != nil {
		return nil, err
	}
	return []Message{m}, nil
}

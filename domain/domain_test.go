package domain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// ensure that new topic names follow api.md §0.6 and legacy names up to 255 still pass.
func TestTopicNameRules(t *testing.T) {
	good := []string{"orders", "a", "A.b_c-9", strings.Repeat("x", 200)}
	bad := []string{"", ".", "..", "a/b", "a b", "ü", strings.Repeat("x", 201), "a\x00"}
	for _, n := range good {
		if err := ValidateNewTopicName(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidateNewTopicName(n); !errors.Is(err, ErrInvalidTopicName) {
			t.Errorf("%q accepted (err %v)", n, err)
		}
	}
	if err := ValidateTopicName(strings.Repeat("x", 255)); err != nil {
		t.Errorf("legacy 255-character name refused: %v", err)
	}
	if err := ValidateTopicName(strings.Repeat("x", 256)); err == nil {
		t.Error("256-character name accepted")
	}
	if !NamesCollide("Orders", "orders") || NamesCollide("orders", "orders") || NamesCollide("a", "b") {
		t.Error("case-collision rule wrong")
	}
}

// ensure that the key hash is 32-bit FNV-1a modulo the partition count.
func TestKeyPartitionIsFNV1a(t *testing.T) {
	// FNV-1a("a") = 0xe40c292c; FNV-1a("foobar") = 0xbf9cf968 (published test vectors).
	if got, want := KeyPartition([]byte("a"), 1<<31-1), int32(0xe40c292c%(1<<31-1)); got != want {
		t.Fatalf("a: %d want %d", got, want)
	}
	if got, want := KeyPartition([]byte("foobar"), 7), int32(0xbf9cf968%7); got != want {
		t.Fatalf("foobar: %d want %d", got, want)
	}
}

// ensure that receipt handles round-trip and malformed ones are refused (api.md §2.14.2).
func TestReceiptHandle(t *testing.T) {
	h := ReceiptHandle{Partition: 2, Offset: 0, Nonce: 181499699661178901}
	if h.String() != "2:0:181499699661178901" {
		t.Fatalf("String = %q", h.String())
	}
	got, err := ParseReceiptHandle(h.String())
	if err != nil || got != h {
		t.Fatalf("round trip: %v %v", got, err)
	}
	for _, s := range []string{"", "1:2", "1:2:3:4", "-1:0:1", "0:-1:1", "0:0:0", "a:0:1", "0:0:18446744073709551616", "+1:0:1", "0:0: 1", "2147483648:0:1"} {
		if _, err := ParseReceiptHandle(s); !errors.Is(err, ErrInvalidReceiptHandle) {
			t.Errorf("%q accepted (err %v)", s, err)
		}
	}
}

// ensure that the parser never panics and accepts only what it can print back.
func FuzzParseReceiptHandle(f *testing.F) {
	for _, s := range []string{"2:0:181499699661178901", "0:0:1", "1:2", "x", "0:9223372036854775807:18446744073709551615"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseReceiptHandle(s)
		if err != nil {
			return
		}
		again, err := ParseReceiptHandle(h.String())
		if err != nil || again != h || h.Nonce == 0 || h.Offset < 0 || h.Partition < 0 {
			t.Fatalf("%q parsed to %+v, reprinted %q: %v", s, h, h.String(), err)
		}
	})
}

type envelope struct {
	Topic           string          `json:"topic"`
	Partition       int32           `json:"partition"`
	Offset          int64           `json:"offset"`
	Key             *string         `json:"key"`
	KeyEncoding     string          `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
	Timestamp       int64           `json:"timestamp"`
	ReceiptHandle   string          `json:"receipt_handle"`
}

// decodePayload base64-decodes a payload flagged "payload_encoding":"base64".
func decodePayload(t *testing.T, e envelope) []byte {
	t.Helper()
	var s string
	if err := json.Unmarshal(e.Payload, &s); err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ensure that JSON is spliced verbatim, text quoted and binary base64'd, keys likewise (story F8).
func TestEnvelopeRendering(t *testing.T) {
	h := &ReceiptHandle{Partition: 2, Offset: 7, Nonce: 9}
	cases := []struct {
		name, payload, key string
		want               string
	}{
		{"json_object", ` {"a": 1} `, "k", `{"topic":"t","partition":2,"offset":7,"key":"k","payload": {"a": 1} ,"timestamp":1783615560,"receipt_handle":"2:7:9"}`},
		{"json_string", `"hi"`, "", `{"topic":"t","partition":2,"offset":7,"payload":"hi","timestamp":1783615560,"receipt_handle":"2:7:9"}`},
		{"text", "hello-v1\n\"q\"", "", `{"topic":"t","partition":2,"offset":7,"payload":"hello-v1\n\"q\"","timestamp":1783615560,"receipt_handle":"2:7:9"}`},
		{"binary", "\xff\x00\x01", "\xc3\x28", `{"topic":"t","partition":2,"offset":7,"key":"wyg=","key_encoding":"base64","payload":"/wAB","payload_encoding":"base64","timestamp":1783615560,"receipt_handle":"2:7:9"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Delivery{Topic: "t", Partition: 2, Handle: h, Record: Record{Offset: 7, Key: []byte(c.key), Payload: []byte(c.payload), CommittedAtMs: 1783615560123}}
			got := string(AppendEnvelope(nil, d))
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatal("envelope is not valid JSON")
			}
		})
	}
}

// ensure that any bytes at all give valid JSON from which the client rule recovers them exactly.
func FuzzEnvelopeRoundTrip(f *testing.F) {
	f.Add([]byte(`{"a":1}`), []byte("k"))
	f.Add([]byte("plain text"), []byte{})
	f.Add([]byte{0xff, 0xfe}, []byte{0xc3, 0x28})
	f.Fuzz(func(t *testing.T, payload, key []byte) {
		if len(payload) == 0 {
			return
		}
		out := AppendEnvelope(nil, Delivery{Topic: "t", Record: Record{Payload: payload, Key: key}})
		var e envelope
		if err := json.Unmarshal(out, &e); err != nil {
			t.Fatalf("invalid JSON %q: %v", out, err)
		}
		got := clientPayload(t, e, payload)
		if !bytes.Equal(got, payload) {
			t.Fatalf("payload %q came back as %q", payload, got)
		}
		if len(key) > 0 && clientKey(t, e) != string(key) {
			t.Fatalf("key %q came back as %q", key, clientKey(t, e))
		}
	})
}

// clientPayload recovers the stored bytes as a client would: base64 when
// flagged, verbatim JSON when the stored bytes were JSON, else the string value.
func clientPayload(t *testing.T, e envelope, stored []byte) []byte {
	t.Helper()
	if e.PayloadEncoding == "base64" {
		return decodePayload(t, e)
	}
	if json.Valid(stored) {
		// spliced verbatim; a decoder hands back the value without the
		// surrounding JSON whitespace
		if !bytes.Equal(e.Payload, bytes.TrimSpace(stored)) {
			t.Fatalf("JSON payload %q not spliced verbatim: %q", stored, e.Payload)
		}
		return stored
	}
	var s string
	if err := json.Unmarshal(e.Payload, &s); err != nil {
		t.Fatalf("text payload not a JSON string: %s", e.Payload)
	}
	return []byte(s)
}

func clientKey(t *testing.T, e envelope) string {
	t.Helper()
	if e.KeyEncoding != "base64" {
		return *e.Key
	}
	b, err := base64.StdEncoding.DecodeString(*e.Key)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package deadletter

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/domain"
)

// Ensure that a dead letter reads as plain JSON with its origin, and that
// ParseLetter gives back every byte of key and payload, whatever they hold.
func TestLetterRoundTrip(t *testing.T) {
	cases := []struct {
		name, key, payload, want string
	}{
		{"json payload verbatim", "k1", `{"id":7}`,
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"key":"k1","payload":{"id":7}}`},
		{"text payload marked string", "", `hello`,
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"payload":"hello","payload_encoding":"string"}`},
		{"a JSON string stays JSON", "", `"hello"`,
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"payload":"hello"}`},
		{"spaced JSON is text", "", ` 1 `,
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"payload":" 1 ","payload_encoding":"string"}`},
		{"binary base64", "\xff", "\x00\xfe",
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"key":"/w==","key_encoding":"base64","payload":"AP4=","payload_encoding":"base64"}`},
		{"empty payload", "", "",
			`{"dead_letter":{"topic":"orders","partition":2,"offset":41,"timestamp":1700000000,"receive_count":5,"reason":"bad \"json\""},"payload":"","payload_encoding":"string"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := Letter{Topic: "orders", Partition: 2, Offset: 41, TimestampS: 1700000000, ReceiveCount: 5,
				Reason: `bad "json"`, Key: []byte(c.key), Payload: []byte(c.payload)}
			b := AppendLetter(nil, l)
			if string(b) != c.want {
				t.Fatalf("got  %s\nwant %s", b, c.want)
			}
			if !json.Valid(b) {
				t.Fatal("not valid JSON")
			}
			got, err := ParseLetter(b)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Key, l.Key) || !bytes.Equal(got.Payload, l.Payload) {
				t.Fatalf("key %q payload %q, want %q %q", got.Key, got.Payload, l.Key, l.Payload)
			}
			got.Key, got.Payload, l.Key, l.Payload = nil, nil, nil, nil
			if !reflect.DeepEqual(got, l) {
				t.Fatalf("parsed %+v, want %+v", got, l)
			}
		})
	}
}

// Ensure that what is not a dead letter is refused as invalid input.
func TestParseLetterRefuses(t *testing.T) {
	for _, in := range []string{
		``, `[]`, `{"payload":1}`, `{"dead_letter":{"topic":"a","partition":0,"offset":0}}`,
		`{"dead_letter":{"topic":"","partition":0,"offset":0},"payload":1}`,
		`{"dead_letter":{"topic":"a","partition":-1,"offset":0},"payload":1}`,
		`{"dead_letter":{"topic":"a","partition":0,"offset":0},"payload":1,"payload_encoding":"base64"}`,
		`{"dead_letter":{"topic":"a","partition":0,"offset":0},"payload":"!!","payload_encoding":"base64"}`,
		`{"dead_letter":{"topic":"a","partition":0,"offset":0},"payload":"x","payload_encoding":"rot13"}`,
	} {
		if _, err := ParseLetter([]byte(in)); !errors.Is(err, domain.ErrInvalidArgument) {
			t.Errorf("ParseLetter(%s) = %v, want ErrInvalidArgument", in, err)
		}
	}
}

// FuzzLetter: any key and payload survive AppendLetter and ParseLetter byte
// for byte, and the letter is always valid JSON.
func FuzzLetter(f *testing.F) {
	f.Add([]byte("k"), []byte(`{"a":[1,2]}`), "reason")
	f.Add([]byte{}, []byte("\xff\x00"), "")
	f.Add([]byte("\u2028"), []byte(`"\u0000"`), "\x7f")
	f.Fuzz(func(t *testing.T, key, payload []byte, reason string) {
		l := Letter{Topic: "t", Partition: 1, Offset: 9, ReceiveCount: 3, Reason: reason, Key: key, Payload: payload}
		b := AppendLetter(nil, l)
		if !json.Valid(b) {
			t.Fatalf("not valid JSON: %s", b)
		}
		got, err := ParseLetter(b)
		if err != nil {
			t.Fatalf("ParseLetter(%s): %v", b, err)
		}
		if !bytes.Equal(got.Key, key) || !bytes.Equal(got.Payload, payload) {
			t.Fatalf("key %q payload %q, want %q %q (%s)", got.Key, got.Payload, key, payload, b)
		}
	})
}

package remote

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ensure that each message is encoded as internals.md §7.2 "Encoding" and
// api.md §2.13.1 say: a JSON key or a base64 one, a raw payload or a base64
// one, byte for byte.
func TestAppendMessage(t *testing.T) {
	cases := []struct {
		name    string
		key     string
		payload string
		force   bool
		want    string
	}{
		{"object with key", "k", `{"a":1}`, false, `{"key":"k","payload":{"a":1}}`},
		{"no key", "", `"hi"`, false, `{"payload":"hi"}`},
		{"text is not JSON", "", "hello", false, `{"payload":"aGVsbG8=","payload_encoding":"base64"}`},
		{"leading space", "", " 1", false, `{"payload":"IDE=","payload_encoding":"base64"}`},
		{"trailing newline", "", "1\n", false, `{"payload":"MQo=","payload_encoding":"base64"}`},
		{"null", "", "null", false, `{"payload":null}`},
		{"number", "", "-1.5e3", false, `{"payload":-1.5e3}`},
		{"leading zero is not JSON", "", "01", false, `{"payload":"MDE=","payload_encoding":"base64"}`},
		{"two values", "", "1 2", false, `{"payload":"MSAy","payload_encoding":"base64"}`},
		{"JSON string holding invalid UTF-8", "", "\"\xff\"", false, `{"payload":"Iv8i","payload_encoding":"base64"}`},
		{"inner whitespace kept", "", `[1, 2]`, false, `{"payload":[1, 2]}`},
		{"forced", "", `{"a":1}`, true, `{"payload":"eyJhIjoxfQ==","payload_encoding":"base64"}`},
		{"empty payload", "", "", false, `{"payload":"","payload_encoding":"base64"}`},
		{"binary key", "\xff\x00", "1", false, `{"key":"/wA=","key_encoding":"base64","payload":1}`},
		{"escaped key", "a\"b\\c\n\r\t\b\f\x01\x1f", "1", false, `{"key":"a\"b\\c\n\r\t\u0008\u000c\u0001\u001f","payload":1}`},
		{"unicode key", "ключ-😀", "true", false, `{"key":"ключ-😀","payload":true}`},
		{"key with NUL", "a\x00", "1", false, `{"key":"a\u0000","payload":1}`},
	}
	for _, c := range cases {
		got := AppendMessage([]byte("prefix"), []byte(c.key), []byte(c.payload), c.force)
		if string(got) != "prefix"+c.want {
			t.Errorf("%s:\n got %s\nwant prefix%s", c.name, got, c.want)
		}
		if n := MessageLen([]byte(c.key), []byte(c.payload), c.force); n != len(c.want) {
			t.Errorf("%s: MessageLen = %d, want %d", c.name, n, len(c.want))
		}
	}
}

// decoded is one message of a batch body as a target reads it.
type decoded struct {
	Key             *string         `json:"key"`
	KeyEncoding     string          `json:"key_encoding"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding"`
}

// decodeBatch reads a batch body the way api.md §2.13.1 describes and
// returns each message's stored key and payload.
func decodeBatch(body []byte) ([][2][]byte, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("not JSON: %s", body)
	}
	var batch struct {
		Messages []decoded `json:"messages"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&batch); err != nil {
		return nil, err
	}
	out := make([][2][]byte, len(batch.Messages))
	for i, m := range batch.Messages {
		var err error
		if m.Key != nil {
			out[i][0] = []byte(*m.Key)
			if m.KeyEncoding == "base64" {
				if out[i][0], err = base64.StdEncoding.Strict().DecodeString(*m.Key); err != nil {
					return nil, err
				}
			}
		}
		out[i][1] = m.Payload
		if m.PayloadEncoding == "base64" {
			var s string
			if err := json.Unmarshal(m.Payload, &s); err != nil {
				return nil, err
			}
			if out[i][1], err = base64.StdEncoding.Strict().DecodeString(s); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// ensure that a decoded batch gives back every key and payload byte for
// byte, for random byte strings and for the awkward shapes.
func TestAppendBatchRoundTrip(t *testing.T) {
	shapes := []string{
		"null", "0", "-0.5", "1e9", `"text"`, `{"a":[1,{"b":null}]}`, "[]", "{}",
		" {} ", "\n1", "1\t", "\xff\xfe", "\"\xc3\x28\"", "a\x00b", "\"ctl\x01\"", `"\u0000"`,
		"\u2028", "true", "tru", "", "{\"a\":\"\xed\xa0\x80\"}",
	}
	r := rand.New(rand.NewPCG(5, 6))
	var msgs []Message
	for _, s := range shapes {
		msgs = append(msgs, Message{Key: []byte(s), Payload: []byte(s)})
		msgs = append(msgs, Message{Payload: []byte(s), ForceBase64: true})
	}
	for range 500 {
		m := Message{Key: randomBytes(r, r.IntN(20)), ForceBase64: r.IntN(4) == 0}
		switch r.IntN(3) {
		case 0:
			m.Payload = randomBytes(r, r.IntN(64))
		case 1:
			m.Payload = []byte(shapes[r.IntN(len(shapes))])
		default:
			m.Payload, _ = json.Marshal(map[string]any{"k": string(randomBytes(r, 8)), "n": r.Float64()})
		}
		msgs = append(msgs, m)
	}
	body := AppendBatch(nil, msgs)
	got, err := decodeBatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(msgs) {
		t.Fatalf("%d messages back, %d sent", len(got), len(msgs))
	}
	sizes := make([]int, len(msgs))
	for i, m := range msgs {
		if !bytes.Equal(got[i][0], m.Key) || !bytes.Equal(got[i][1], m.Payload) {
			t.Fatalf("message %d: sent key %q payload %q, got back %q %q", i, m.Key, m.Payload, got[i][0], got[i][1])
		}
		sizes[i] = MessageLen(m.Key, m.Payload, m.ForceBase64)
	}
	if BatchLen(sizes) != len(body) {
		t.Fatalf("BatchLen = %d, body is %d", BatchLen(sizes), len(body))
	}
}

// ensure that a batch built from pre-encoded messages equals one built
// from the messages, and that an empty batch still has its frame.
func TestAppendEncodedBatch(t *testing.T) {
	msgs := []Message{{Key: []byte("a"), Payload: []byte("1")}, {Payload: []byte("x")}}
	var encoded [][]byte
	for _, m := range msgs {
		encoded = append(encoded, AppendMessage(nil, m.Key, m.Payload, m.ForceBase64))
	}
	if a, b := AppendEncodedBatch(nil, encoded), AppendBatch(nil, msgs); !bytes.Equal(a, b) {
		t.Fatalf("%s != %s", a, b)
	}
	if got := string(AppendBatch(nil, nil)); got != `{"messages":[]}` || BatchLen(nil) != len(got) {
		t.Fatalf("empty batch %s", got)
	}
}

// ensure that the capability probe is 101 payload-less messages, each of
// which a target refuses as empty.
func TestAppendProbe(t *testing.T) {
	body := AppendProbe(nil)
	got, err := decodeBatch(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != ProbeMessages || ProbeMessages != 101 {
		t.Fatalf("%d messages", len(got))
	}
	for i, m := range got {
		if len(m[0]) != 0 || len(m[1]) != 0 {
			t.Fatalf("message %d carries %q %q", i, m[0], m[1])
		}
	}
	if !strings.HasPrefix(string(body), `{"messages":[{"payload":"","payload_encoding":"base64"},`) {
		t.Fatalf("probe body %.80s", body)
	}
}

// ensure that encoding a message into a buffer with room allocates nothing
// for JSON, binary and text payloads.
func TestAppendMessageAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector (it drops sync.Pool items)")
	}
	key := []byte("customer-\x01-42")
	bin := []byte("\xff\xfe binary key")
	payloads := [][]byte{
		[]byte(`{"order_id":"ord_124","items":[1,2,3],"note":"ünïcode"}`),
		[]byte("plain text, not json"),
		{0x0a, 0x03, 0xff, 0x00, 0x12},
		[]byte(" {} "),
	}
	buf := make([]byte, 0, 4096)
	for _, p := range payloads {
		for _, k := range [][]byte{key, bin} {
			if n := testing.AllocsPerRun(100, func() { buf = AppendMessage(buf[:0], k, p, false) }); n != 0 {
				t.Errorf("AppendMessage(%q, %q) allocates %v times", k, p, n)
			}
		}
	}
}

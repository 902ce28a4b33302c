package remote

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// FuzzClassify holds that no answer panics the classifier, that every
// verdict has a state, an action and an index of at least -1, and that a
// wait never exceeds the longest the spec allows.
func FuzzClassify(f *testing.F) {
	f.Add(202, []byte(`{"accepted":1}`+"\n"), uint8(0), int64(0), false)
	f.Add(400, []byte(`{"error":"message 12: invalid json"}`), uint8(0), int64(0), true)
	f.Add(400, []byte(`{"error":"message 99999999999999999999: x"}`), uint8(0), int64(0), false)
	f.Add(404, []byte("<html>Not Found</html>"), uint8(0), int64(0), false)
	f.Add(429, []byte(`{"error":"slow down"}`), uint8(0), int64(90*time.Second), false)
	f.Add(0, []byte(nil), uint8(3), int64(0), false)
	f.Fuzz(func(t *testing.T, status int, body []byte, transport uint8, retryAfter int64, compressed bool) {
		a := Answer{Status: status, Body: body, Err: TransportErr(transport % 5), RetryAfter: time.Duration(retryAfter)}
		v := Classify(a, compressed)
		if !v.State.Valid() || v.Action.String() == "invalid" || v.Index < -1 {
			t.Fatalf("%+v gave %+v", a, v)
		}
		if v.RetryAfter < 0 || v.RetryAfter > GateRetryAfterMax {
			t.Fatalf("%+v waits %s", a, v.RetryAfter)
		}
		if v.Index >= 0 && v.Within(v.Index).Index != -1 {
			t.Fatalf("Within(%d) kept index %d", v.Index, v.Index)
		}
		if n, ok := ProbeCapacity(a); ok && n != ChunkMaxMessagesLegacy && n != ChunkMaxMessagesCapable {
			t.Fatalf("probe capacity %d", n)
		}
	})
}

// FuzzAppendMessage holds that every encoded message, alone and in a
// batch, is valid JSON that decodes back to the exact key and payload, and
// that MessageLen predicts its length.
func FuzzAppendMessage(f *testing.F) {
	for _, seed := range []string{"", "null", "0", `{"a":1}`, " 1 ", "\xff", "\"\x01\"", `"\u00e9"`, "a\"b\\"} {
		f.Add([]byte(seed), []byte(seed), false)
	}
	f.Add([]byte("k"), []byte(`[1,2]`), true)
	f.Fuzz(func(t *testing.T, key, payload []byte, force bool) {
		msg := AppendMessage(nil, key, payload, force)
		if !json.Valid(msg) {
			t.Fatalf("not JSON: %q", msg)
		}
		if n := MessageLen(key, payload, force); n != len(msg) {
			t.Fatalf("MessageLen %d, encoded %d: %q", n, len(msg), msg)
		}
		got, err := decodeBatch(AppendEncodedBatch(nil, [][]byte{msg, msg}))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got {
			if !bytes.Equal(m[0], key) || !bytes.Equal(m[1], payload) {
				t.Fatalf("sent %q %q, got back %q %q", key, payload, m[0], m[1])
			}
		}
		raw := bytes.Contains(msg, []byte(`"payload":`)) && !bytes.HasSuffix(msg, []byte(`,"payload_encoding":"base64"}`))
		if raw != (!force && PayloadRaw(payload)) {
			t.Fatalf("raw %v for %q (force %v)", raw, payload, force)
		}
		if raw && (!json.Valid(payload) || len(bytes.TrimSpace(payload)) != len(payload)) {
			t.Fatalf("%q went raw", payload)
		}
	})
}

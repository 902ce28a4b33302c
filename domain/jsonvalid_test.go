package domain

import (
	"encoding/json"
	"strings"
	"testing"
)

var validJSONCases = []string{
	`{"a":1}`, ` {"a": [1, 2.5e-3, -0, true, false, null, "x\u00e9\n"]} `, `[]`, `{}`, `[[[]]]`, `"s"`, `42`, `-1.0E+2`,
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`,
	`"unterminated`, "\"ctl\x01\"", `"\x"`, `"\u12"`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `[1]]`, `hello-v1`, "\xff\xfe",
	`{"a":{"b":[{"c":{}}]}}`, `[{}, [], "", 0]`, "\"\xff\"",
}

// ensure that validJSON answers exactly as encoding/json.Valid on hand-picked cases.
func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	cases := append(validJSONCases, strings.Repeat("[", 5000)+strings.Repeat("]", 5000))
	for _, c := range cases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("%q: validJSON %v, json.Valid %v", c, got, want)
		}
	}
}

// ensure that validJSON and encoding/json.Valid never disagree, whatever the bytes.
func FuzzValidJSON(f *testing.F) {
	for _, c := range validJSONCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("%q: validJSON %v, json.Valid %v", b, got, want)
		}
	})
}

// BenchmarkValidJSON compares the envelope's validity check with encoding/json.Valid on a 256-byte JSON payload.
func BenchmarkValidJSON(b *testing.B) {
	payload := []byte(`{"id":"bench-000001","seq":123456,"sent_at_ms":1795952144000,"kind":"json","pad":"` + strings.Repeat("x", 160) + `"}`)
	b.Run("validJSON", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for i := 0; i < b.N; i++ {
			validJSON(payload)
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for i := 0; i < b.N; i++ {
			json.Valid(payload)
		}
	})
}

// ensure that validJSON allocates nothing for a nested payload: rendering
// every delivered payload asks it.
func TestValidJSONDoesNotAllocate(t *testing.T) {
	payload := []byte(`{"a":[{"b":[1,2,{"c":"d"}]}],"e":{"f":null}}`)
	if n := testing.AllocsPerRun(100, func() { validJSON(payload) }); n != 0 {
		t.Fatalf("%v allocations per call", n)
	}
}

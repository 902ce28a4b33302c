package httpclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/narad/narad/adapters/httpclient"
	"github.com/narad/narad/domain"
)

// ensure that envelopes rendered by the domain's encoder decode back to the stored key and bytes.
func TestDecodeEnvelopeRoundTripsDomainEnvelopes(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		key, payload []byte
		handle       *domain.ReceiptHandle
		body         []byte // the decoded Body; nil = payload
		binary       bool
		keyBinary    bool
	}{
		"json_object":       {payload: []byte(`{"order_id":"ord_123"}`), handle: &domain.ReceiptHandle{Partition: 2, Offset: 9, Nonce: 77}},
		"json_with_spaces":  {payload: []byte(" [1, 2] "), key: []byte("k"), body: []byte("[1, 2]")},
		"plain_text":        {payload: []byte("hello \"world\"\n"), key: []byte("customer-42")},
		"binary_payload":    {payload: []byte{0xff, 0x00, 0x01}, binary: true},
		"binary_key":        {payload: []byte("x"), key: []byte{0xc3, 0x28}, keyBinary: true},
		"json_string_value": {payload: []byte(`"quoted"`), body: []byte("quoted")},
		"json_number":       {payload: []byte("42")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := domain.AppendEnvelope(nil, domain.Delivery{Topic: "orders", Partition: 2, Record: domain.Record{Offset: 9, Key: tc.key, Payload: tc.payload, CommittedAtMs: 1783615560123}, Handle: tc.handle})
			m, err := httpclient.DecodeEnvelope(env)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			want := tc.body
			if want == nil {
				want = tc.payload
			}
			if !bytes.Equal(m.Body, want) || m.Binary != tc.binary {
				t.Fatalf("body %q binary %v, want %q %v (envelope %s)", m.Body, m.Binary, want, tc.binary, env)
			}
			if !bytes.Equal(m.Key, tc.key) || m.KeyBinary != tc.keyBinary {
				t.Fatalf("key %q binary %v, want %q", m.Key, m.KeyBinary, tc.key)
			}
			if m.Topic != "orders" || m.Partition != 2 || m.Offset != 9 || m.Timestamp != 1783615560 {
				t.Fatalf("message %+v", m)
			}
			if (tc.handle == nil) != (m.ReceiptHandle == "") {
				t.Fatalf("handle %q", m.ReceiptHandle)
			}
		})
	}
}

// ensure that malformed envelopes are refused as malformed replies.
func TestDecodeEnvelopeRefusesMalformed(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"not_json":              `{"topic":`,
		"no_partition":          `{"topic":"t","offset":1,"payload":1,"timestamp":1}`,
		"no_offset":             `{"topic":"t","partition":1,"payload":1,"timestamp":1}`,
		"no_payload":            `{"topic":"t","partition":1,"offset":1,"timestamp":1}`,
		"negative_offset":       `{"topic":"t","partition":1,"offset":-1,"payload":1}`,
		"unknown_key_encoding":  `{"topic":"t","partition":1,"offset":1,"key":"x","key_encoding":"hex","payload":1}`,
		"bad_key_base64":        `{"topic":"t","partition":1,"offset":1,"key":"!!","key_encoding":"base64","payload":1}`,
		"unknown_payload_enc":   `{"topic":"t","partition":1,"offset":1,"payload":"x","payload_encoding":"gzip"}`,
		"base64_payload_object": `{"topic":"t","partition":1,"offset":1,"payload":{},"payload_encoding":"base64"}`,
		"bad_payload_base64":    `{"topic":"t","partition":1,"offset":1,"payload":"%%%","payload_encoding":"base64"}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := httpclient.DecodeEnvelope([]byte(in)); !errors.Is(err, httpclient.ErrMalformedReply) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// ensure that a batch body decodes every envelope and names the bad one.
func TestDecodeMessagesBatch(t *testing.T) {
	t.Parallel()
	ms, err := httpclient.DecodeMessages([]byte(`{"messages":[{"partition":0,"offset":1,"payload":1},{"partition":1,"offset":2,"payload":2}]}`), true)
	if err != nil || len(ms) != 2 || ms[1].Offset != 2 {
		t.Fatalf("messages %+v err %v", ms, err)
	}
	_, err = httpclient.DecodeMessages([]byte(`{"messages":[{"partition":0,"offset":1,"payload":1},{"partition":1}]}`), true)
	if !errors.Is(err, httpclient.ErrMalformedReply) || err.Error()[:9] != "message 1" {
		t.Fatalf("err = %v", err)
	}
}

// FuzzDecodeEnvelope checks that decoding never panics and that what it
// accepts is consistent with the envelope rules of api.md §2.14.1.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"topic":"orders","partition":2,"offset":0,"key":"customer-42","payload":{"order_id":"ord_123"},"timestamp":1783615560,"receipt_handle":"2:0:181499699661178901"}`))
	f.Add([]byte(`{"topic":"t","partition":0,"offset":3,"key":"AIOD/w==","key_encoding":"base64","payload":"aGVsbG8=","payload_encoding":"base64","timestamp":1}`))
	f.Add([]byte(`{"messages":[{"topic":"t","partition":1,"offset":1,"payload":"x","timestamp":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := httpclient.DecodeEnvelope(data)
		if err == nil {
			if m.Partition < 0 || m.Offset < 0 || len(m.Payload) == 0 {
				t.Fatalf("accepted %+v", m)
			}
			if !m.Binary && !json.Valid(m.Payload) {
				t.Fatalf("payload %q is not JSON", m.Payload)
			}
			if !m.Binary && m.Payload[0] != '"' && !bytes.Equal(m.Body, m.Payload) {
				t.Fatalf("non-string payload %q decoded to %q", m.Payload, m.Body)
			}
			// The domain's encoder renders what was decoded back to the same key,
			// and binary bytes back to the same bytes.
			again, err := httpclient.DecodeEnvelope(domain.AppendEnvelope(nil, domain.Delivery{Topic: m.Topic, Partition: int32(m.Partition), Record: domain.Record{Offset: m.Offset, Key: m.Key, Payload: m.Body}}))
			if err != nil {
				t.Fatalf("re-rendered envelope of %+v: %v", m, err)
			}
			if !bytes.Equal(again.Key, m.Key) || (!utf8.Valid(m.Body) && !bytes.Equal(again.Body, m.Body)) {
				t.Fatalf("round trip changed %+v into %+v", m, again)
			}
		}
		for _, batch := range []bool{false, true} {
			ms, err := httpclient.DecodeMessages(data, batch)
			if err == nil && len(ms) == 0 && !batch {
				t.Fatal("a single-shape answer decoded to no message")
			}
		}
	})
}

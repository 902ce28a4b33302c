package remote

import "testing"

// BenchmarkAppendMessage measures encoding one keyed record with a raw JSON
// payload into a reused buffer (the hot path of every chunk).
func BenchmarkAppendMessage(b *testing.B) {
	key := []byte("customer-42")
	payload := []byte(`{"order_id":"ord_124","customer":"customer-42","items":[{"sku":"a-1","qty":2},{"sku":"b-7","qty":1}],"total":41.5}`)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		buf = AppendMessage(buf[:0], key, payload, false)
	}
}

// BenchmarkAppendMessageBase64 measures a binary payload, sent as base64.
func BenchmarkAppendMessageBase64(b *testing.B) {
	key := []byte("customer-42")
	payload := make([]byte, 256)
	for i := range payload {
		payload[i] = byte(i)
	}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		buf = AppendMessage(buf[:0], key, payload, false)
	}
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// slowWire decodes body with encoding/json alone (the decoder the scanner
// stands in front of).
func slowWire(body []byte) ([]wireMessage, error) {
	return decodeWire(json.NewDecoder(bytes.NewReader(body)))
}

// fastWire scans body with the fast path alone.
func fastWire(body []byte, declared int64) ([]wireMessage, bool) {
	return newBatchScanner(&cappedReader{r: bytes.NewReader(body), left: batchBodyMaxBytes}, declared).scan()
}

var scanSeeds = []string{
	`{"messages":[{"payload":1}]}`,
	` { "messages" : [ { "payload" : {"a":[1,2.5e-3,true,false,null,"x\"\u00e9"]} , "key" : "k-1" } , {"payload":"s","partition":-3} ] } ` + "\n",
	`{"messages":[{"key":"/wA=","key_encoding":"base64","payload":"aGk=","payload_encoding":"base64","partition":1}]}`,
	`{"messages":[{"key":null,"key_encoding":null,"payload":[],"payload_encoding":null,"partition":null}]}`,
	`{"messages":[{}]}`, `{"messages":[{"payload":null}]}`, `{"messages":[{"Payload":1}]}`,
	`{"messages":[{"payload":1,"payload":2}]}`, `{"messages":[{"payload":01}]}`, `{"messages":[{"payload":1.}]}`,
	`{"messages":[{"payload":1,"partition":1.0}]}`, `{"messages":[{"payload":1,"partition":99999999999999999999}]}`,
	`{"messages":[{"payload":"é","key":"é"}]}`, `{"messages":[{"payload":"a\tb"}]}`, `{"messages":[{"payload":1}]}x`,
	`{"messages":[{"payload":1}],}`, `{"messages":[{"payload":1},]}`, `{"messages":[]}`, `{"messages":[0,0]}`, ``,
	`{"messages":[{"payload":{"a":1,}}]}`, `{"messages":[{"payload":[1 2]}]}`, `{"messages":[{"payload":"\x"}]}`,
	`{"messages":[{"payload":-}]}`, `{"messages":[{"payload":tru}]}`, `{"messages":[{"payload":1e+}]}`,
}

// ensure that whatever the fast scanner accepts decodes exactly as
// encoding/json decodes it, and that it accepts the plain bodies clients
// send (conformance 191, 193-195 hold on either path).
func TestBatchScanMatchesDecoder(t *testing.T) {
	accepted := 0
	for _, body := range scanSeeds {
		if checkScanMatches(t, []byte(body)) {
			accepted++
		}
	}
	for _, body := range scanSeeds[:4] {
		if _, ok := fastWire([]byte(body), int64(len(body))); !ok {
			t.Errorf("plain body %s went to the slow path", body)
		}
	}
	if _, ok := fastWire([]byte(benchBatchBody(1000)), 0); !ok {
		t.Error("a 1,000-message body went to the slow path")
	}
	if _, ok := fastWire([]byte(benchBatchBody(1001)), 0); ok {
		t.Error("the fast path took 1,001 messages")
	}
	t.Logf("%d of %d seeds scanned", accepted, len(scanSeeds))
}

func checkScanMatches(t *testing.T, body []byte) bool {
	t.Helper()
	fast, ok := fastWire(body, 0)
	if !ok {
		return false
	}
	slow, err := slowWire(body)
	if err != nil {
		t.Fatalf("%q: scanned, but encoding/json refuses it: %v", body, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: scanned %s, encoding/json %s", body, dumpWire(fast), dumpWire(slow))
	}
	return true
}

func dumpWire(ws []wireMessage) string {
	var b strings.Builder
	str := func(p *string) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprintf("%q", *p)
	}
	for _, w := range ws {
		part := "nil"
		if w.Partition != nil {
			part = fmt.Sprint(*w.Partition)
		}
		fmt.Fprintf(&b, "{key %s/%s payload %q/%s partition %s}", str(w.Key), str(w.KeyEncoding), w.Payload, str(w.PayloadEncoding), part)
	}
	return b.String()
}

// FuzzBatchScanMatchesDecoder ensures that the fast batch scanner never
// accepts a body encoding/json refuses, nor decodes one differently.
func FuzzBatchScanMatchesDecoder(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkScanMatches(t, body) })
}

// benchBatchBody is a batch of n messages with 256-byte JSON object
// payloads, as narad bench sends them.
func benchBatchBody(n int) string {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		p := fmt.Sprintf(`{"run":"r-1","seq":%d,"sent_ns":1700000000000000000,"pad":"`, i)
		p += strings.Repeat("x", 256-len(p)-2) + `"}`
		fmt.Fprintf(&b, `{"payload":%s}`, p)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkDecodeBatch decodes a 100-message batch of 256-byte JSON
// payloads: scanner is decodeBatch as served (the fast path), decoder is
// the encoding/json path it falls back to.
func BenchmarkDecodeBatch(b *testing.B) {
	body := []byte(benchBatchBody(100))
	run := func(b *testing.B, decode func() error) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if err := decode(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "msgs/s")
	}
	b.Run("scanner", func(b *testing.B) {
		run(b, func() error {
			bb := &batchBody{raw: &cappedReader{r: bytes.NewReader(body), left: batchBodyMaxBytes}, declared: int64(len(body))}
			bb.decoded = bb.raw
			_, err := decodeBatch(bb)
			return err
		})
	})
	b.Run("decoder", func(b *testing.B) {
		run(b, func() error {
			_, err := slowWire(body)
			return err
		})
	})
}

package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.uber.org/goleak"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain/meta"
)

// runDispatcher commits p's WAL into fake partition logs (this node is
// "n1") until the test ends; it checks that Run leaves no goroutine.
func runDispatcher(t *testing.T, p *produceEnv) *fake.PartitionLogs {
	t.Helper()
	opts := goleak.IgnoreCurrent()
	logs := fake.NewPartitionLogs()
	latch := leaderconfirm.NewLatch(p.store)
	committer := produce.NewCommitter(produce.CommitterDeps{Store: p.store, Logs: logs, Latch: latch, Clock: p.clock, Metrics: &fake.Metrics{}, Self: "n1"})
	d := produce.NewDispatcher(produce.DispatcherDeps{
		WAL: p.wal, Store: p.store, Latch: latch, Confirmer: leaderconfirm.New(p.store), Local: committer,
		Peers: fake.NewPeerCommitter(), Clock: p.clock, Log: slog.New(slog.DiscardHandler), Self: "n1",
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		goleak.VerifyNone(t, opts)
	})
	return logs
}

// ensure that a valid batch answers 202 {"accepted":N}\n as JSON and stores
// each payload as its JSON bytes (a string keeps its quotes), base64
// payloads and keys decoded, no key when none is given (conformance 191,
// 193, 194, 195).
func TestBatchAccepted(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	body := `{"messages":[
		{"key":"customer-42","payload":{"a":1}},
		{"payload":"42"},
		{"payload":"/wA=","payload_encoding":"base64","partition":1},
		{"key":"/wA=","key_encoding":"base64","payload":1}
	]}`
	rec := p.post("/v1/topics/t/produce/batch", []byte(body))
	wantAnswer(t, rec, 202, "{\"accepted\":4}\n")
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	got := p.stored(t)
	want := []struct {
		key, payload []byte
	}{
		{[]byte("customer-42"), []byte(`{"a":1}`)},
		{nil, []byte(`"42"`)},
		{nil, []byte{0xff, 0x00}},
		{[]byte{0xff, 0x00}, []byte("1")},
	}
	for i, w := range want {
		if !bytes.Equal(got[i].Key, w.key) || !bytes.Equal(got[i].Payload, w.payload) {
			t.Fatalf("record %d = key %q payload %q, want %q %q", i, got[i].Key, got[i].Payload, w.key, w.payload)
		}
	}
	if got[2].Partition != 1 {
		t.Fatalf("pinned message in partition %d", got[2].Partition)
	}
}

// ensure that batch refusals carry the spec's statuses and messages, with
// the failing message's index, and store nothing (conformance 196-204).
func TestBatchRefusals(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	p.create(t, "d", 2)
	p.propose(t, &meta.AttachChild{Parent: "t", Child: "d", Epoch: fmt.Sprintf("%016x", 77), DelayMs: 60_000})
	p.propose(t, schemaTopic("s", 3))
	many := `{"messages":[` + strings.Repeat(`{"payload":1},`, 1000) + `{"payload":1}]}`
	cases := []struct {
		path, body string
		status     int
		msg        string
	}{
		{"/v1/topics/t/produce/batch?key=x", `{"messages":[{"payload":1}]}`, 400, "key is set per message in a batch produce, not as a query parameter"},
		{"/v1/topics/t/produce/batch?partition=0", `{"messages":[{"payload":1}]}`, 400, "partition is set per message in a batch produce, not as a query parameter"},
		{"/v1/topics/t/produce/batch", `{"messages":[]}`, 400, "messages required"},
		{"/v1/topics/t/produce/batch", many, 400, "too many messages: 1001 (max 1000)"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1,"payload_encoding":"hex"}]}`, 400, `message 0: invalid payload_encoding: want "base64" or none`},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1,"key":"a","key_encoding":"hex"}]}`, 400, `message 0: invalid key_encoding: want "base64" or none`},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":5,"payload_encoding":"base64"}]}`, 400, "message 0: invalid payload: a base64 payload must be a JSON string"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1},{"payload":"","payload_encoding":"base64"}]}`, 400, "message 1: message required"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1,"partition":-1}]}`, 400, "message 0: invalid partition: must be >= 0"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1},{"payload":1,"partition":99}]}`, 400, "message 1: invalid argument: partition out of range"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1,"partition":99},{"key":"a"}]}`, 400, "message 1: message required"},
		{"/v1/topics/s/produce/batch", `{"messages":[{"payload":{"amount":1}},{"payload":{"amount":` + fake.RefuseMarker + `}}]}`, 400, "message 1: invalid argument: schema: payload refused by the fake"},
		{"/v1/topics/d/produce/batch", `{"messages":[{"payload":1}]}`, 409, "direct produce to a delayed child topic is not allowed"},
		{"/v1/topics/missing/produce/batch", `{"messages":[{"payload":1}]}`, 404, "topic not found"},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1,"garbage":true}]}`, 400, `invalid json: json: unknown field "garbage"`},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1}],"extra":1}`, 400, `invalid json: json: unknown field "extra"`},
		{"/v1/topics/t/produce/batch", `{"messages":[{"payload":1}]} {}`, 400, "invalid json: multiple JSON values"},
		{"/v1/topics/t/produce/batch", ``, 400, "invalid json: EOF"},
	}
	for _, c := range cases {
		rec := p.post(c.path, []byte(c.body))
		if rec.Code != c.status || rec.Body.String() != errBody(c.msg) {
			t.Errorf("%s %.60s: %d %q, want %d %q", c.path, c.body, rec.Code, rec.Body.String(), c.status, errBody(c.msg))
		}
	}
	if n := p.wal.DurableNext(); n != 0 {
		t.Fatalf("refused batches stored %d records", n)
	}
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(`{"messages":[`+strings.Repeat(`{"payload":1},`, 999)+`{"payload":1}]}`)),
		202, "{\"accepted\":1000}\n")
}

// ensure that the batch size rules hold: a 2 MiB batch of payloads under
// 1 MiB is accepted, one payload of 1048577 decoded bytes is 413 with its
// index, and a body over 16 MiB as sent or decoded is 413 (conformance 205).
func TestBatchSizes(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	big := strings.Repeat("x", 700<<10)
	three := `{"messages":[{"payload":"` + big + `"},{"payload":"` + big + `"},{"payload":"` + big + `"}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(three)), 202, "{\"accepted\":3}\n")
	over := `{"messages":[{"payload":1},{"payload":"` + b64(make([]byte, 1<<20+1)) + `","payload_encoding":"base64"}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(over)), 413, errBody("message 1: message too large"))
	huge := `{"messages":[{"payload":"` + strings.Repeat("x", 16<<20) + `"}]}`
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", []byte(huge)), 413, errBody("request body too large"))
	bomb := gzipped(t, []byte(huge))
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", bomb, "Content-Encoding", "gzip"), 413, errBody("request body too large"))
	if n := p.wal.DurableNext(); n != 3 {
		t.Fatalf("stored %d records, want 3", n)
	}
}

// ensure that gzip and zstd bodies are decoded, other encodings are 415 and
// a body that does not decode is 400 (conformance 206).
func TestBatchContentEncoding(t *testing.T) {
	t.Parallel()
	p := newProduceEnv(t)
	p.create(t, "t", 1)
	body := []byte(`{"messages":[{"payload":"a"},{"payload":"b"}]}`)
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", gzipped(t, body), "Content-Encoding", "gzip"), 202, "{\"accepted\":2}\n")
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", zstded(t, body), "Content-Encoding", "zstd"), 202, "{\"accepted\":2}\n")
	wantAnswer(t, p.post("/v1/topics/t/produce/batch", body, "Content-Encoding", "br"), 415, errBody(msg415Encoding))
	if rec := p.post("/v1/topics/t/produce/batch", body, "Content-Encoding", "gzip"); rec.Code != 400 || !strings.Contains(rec.Body.String(), "invalid gzip body") {
		t.Fatalf("non-gzip body: %d %s", rec.Code, rec.Body.String())
	}
	if rec := p.post("/v1/topics/t/produce/batch", body, "Content-Encoding", "zstd"); rec.Code != 400 {
		t.Fatalf("non-zstd body: %d %s", rec.Code, rec.Body.String())
	}
	if n := p.wal.DurableNext(); n != 4 {
		t.Fatalf("stored %d records, want 4", n)
	}
}

// ensure that a 1 MiB body of [0,0,...] or of a thousand and more empty
// objects is refused with allocations below the body's own size, never
// body, never hundreds of times it (story F49).
func TestBatchDecodeAllocationsBounded(t *testing.T) {
	zeros := []byte(`{"messages":[0` + strings.Repeat(",0", 1<<19) + `]}`)
	objects := []byte(`{"messages":[{}` + strings.Repeat(",{}", 1<<20/3) + `]}`)
	nested := []byte(`{"messages":[{"payload":` + strings.Repeat("[", 1<<19) + strings.Repeat("]", 1<<19) + `}]}`)
	for name, body := range map[string][]byte{"zeros": zeros, "objects": objects, "nested": nested} {
		allocated := allocatedBy(func() {
			b := &batchBody{raw: &cappedReader{r: bytes.NewReader(body), left: batchBodyMaxBytes}}
			b.decoded = b.raw
			_, _ = decodeBatch(b)
		})
		t.Logf("%s: %d-byte body, %d bytes allocated", name, len(body), allocated)
		if limit := uint64(len(body)); allocated > limit {
			t.Errorf("%s: decoding a %d-byte body allocated %d bytes (limit %d)", name, len(body), allocated, limit)
		}
	}
}

// ensure that a body declared at 1 MiB that sends a few bytes allocates
// no more than the starting buffer (story F49, internals.md §10.4).
func TestReadBodyDoesNotTrustDeclaredLength(t *testing.T) {
	allocated := allocatedBy(func() {
		body, err := readBody(io.LimitReader(strings.NewReader("short"), 5), 1<<20, 1<<20)
		if err != nil || string(body) != "short" {
			t.Errorf("readBody = %q, %v", body, err)
		}
	})
	if allocated > 2*bodyExactMaxBytes {
		t.Fatalf("a stalled 1 MiB body allocated %d bytes", allocated)
	}
	small := allocatedBy(func() { _, _ = readBody(strings.NewReader("tiny"), 4, 1<<20) })
	if small > 1024 {
		t.Fatalf("a 4-byte body allocated %d bytes", small)
	}
	if _, err := readBody(bytes.NewReader(make([]byte, 300<<10)), -1, 256<<10); !isStatus(err, 413) {
		t.Fatalf("undeclared body over the cap: %v", err)
	}
}

func isStatus(err error, status int) bool {
	var ce *clientError
	return errors.As(err, &ce) && ce.status == status
}

func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// FuzzDecodeBatch ensures that no body panics the batch decoder, every
// refusal is a 400 or 413 client error (or a message error), and every
// accepted batch holds 1 to 1000 messages of 1 byte to 1 MiB with
// non-negative pins.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		`{"messages":[{"payload":1}]}`,
		`{"messages":[{"key":"/wA=","key_encoding":"base64","payload":"aGk=","payload_encoding":"base64","partition":1}]}`,
		`{"messages":[0,0,0]}`, `{"messages":null}`, `null`, `[]`, `{"messages":[{}]} x`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		b := &batchBody{raw: &cappedReader{r: bytes.NewReader(body), left: batchBodyMaxBytes}}
		b.decoded = b.raw
		msgs, err := decodeBatch(b)
		if err != nil {
			var ce *clientError
			var me *produce.MessageError
			switch {
			case errors.As(err, &me):
			case errors.As(err, &ce) && (ce.status == 400 || ce.status == 413):
			default:
				t.Fatalf("%q: refusal %v", body, err)
			}
			return
		}
		if len(msgs) == 0 || len(msgs) > produce.BatchMaxMessages {
			t.Fatalf("%q: %d messages accepted", body, len(msgs))
		}
		for _, m := range msgs {
			if len(m.Payload) == 0 || len(m.Payload) > produce.MessageMaxBytes || (m.Partition != nil && *m.Partition < 0) {
				t.Fatalf("%q: message %+v accepted", body, m)
			}
		}
	})
}

func b64(p []byte) string { return base64.StdEncoding.EncodeToString(p) }

func schemaTopic(name string, n int) *meta.CreateTopicWith {
	return &meta.CreateTopicWith{
		CreateTopic: meta.CreateTopic{Name: name, ID: fmt.Sprintf("%016x", n), Partitions: 3, VisibilityTimeoutMs: 30_000},
		Schema:      []byte(`{"type":"object"}`),
	}
}

func gzipped(t testing.TB, p []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, p []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(p, nil)
}

package consume_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// ensure that replay reads exactly (P, O) without a lease, any number of
// times, and answers the read boundaries of internals.md §4.9 (conformance
// 110, 111, 112, 115; story F9).
func TestReplayBoundaries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 3, nil, nil)
	e.produce(tp, 0, `{"a":1}`, `{"a":2}`)
	ctx := context.Background()
	for range 2 {
		d, err := e.svc.Replay(ctx, "orders", 0, 0)
		if err != nil || d.Handle != nil || string(d.Record.Payload) != `{"a":1}` {
			t.Fatalf("replay: %+v %v", d, err)
		}
	}
	if d := e.one("orders", -1); d.Record.Offset != 0 {
		t.Fatalf("queue consume after replay got %d", d.Record.Offset)
	}
	if e.metrics.Count("consumed orders/0") != 1 {
		t.Fatal("replays were counted as consumed")
	}
	_, err := e.svc.Replay(ctx, "orders", 0, 999)
	wantErr(t, err, domain.ErrOffsetNotWritten)
	_, err = e.svc.Replay(ctx, "orders", 0, -1)
	wantErr(t, err, domain.ErrOffsetNegative)
	_, err = e.svc.Replay(ctx, "orders", 9, 0)
	wantErr(t, err, domain.ErrPartitionOutOfRange)
	_, err = e.svc.Replay(ctx, "missing", 0, 0)
	wantErr(t, err, domain.ErrTopicNotFound)

	e.logs.SetRetention("orders", domain.TopicID(tp.ID), time.Minute)
	e.logs.Advance(2 * time.Minute)
	e.produce(tp, 0, "late")
	_, err = e.svc.Replay(ctx, "orders", 0, 1)
	wantErr(t, err, domain.ErrOffsetGone)
	if want := "receipt handle no longer matches an active reservation: offset 1 aged out of retention (oldest retained: 2)"; err.Error() != want {
		t.Fatalf("message %q", err.Error())
	}
	e.reader.setCorrupt(2)
	_, err = e.svc.Replay(ctx, "orders", 0, 2)
	wantErr(t, err, domain.ErrRecordCorrupt)
	if !strings.HasSuffix(err.Error(), "offset 2 is not readable") {
		t.Fatalf("message %q", err.Error())
	}
}

// ensure that a pinned consume reads only its partition, refuses a
// partition out of range, and that pinned, replay and ack of a partition
// another node owns answer ErrNotOwner (conformance 109, 112).
func TestPinnedScopeAndOwnership(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	owner := func(p int32) string {
		if p == 2 {
			return "node-2"
		}
		return self
	}
	tp := e.createTopic("orders", 3, nil, owner)
	e.produce(tp, 1, "one")
	e.produce(tp, 2, "two")
	e.none("orders", 0)
	if d := e.one("orders", 1); d.Partition != 1 {
		t.Fatalf("pinned to 1, got %d", d.Partition)
	}
	ctx := context.Background()
	_, err := e.svc.Consume(ctx, consume.Request{Topic: "orders", Mode: consume.ModePinned, Partition: 3})
	wantErr(t, err, domain.ErrPartitionOutOfRange)
	_, err = e.svc.Consume(ctx, consume.Request{Topic: "orders", Mode: consume.ModePinned, Partition: 2})
	wantErr(t, err, domain.ErrNotOwner)
	_, err = e.svc.Replay(ctx, "orders", 2, 0)
	wantErr(t, err, domain.ErrNotOwner)
	wantErr(t, e.svc.Ack(ctx, "orders", domain.ReceiptHandle{Partition: 2, Offset: 0, Nonce: 5}), domain.ErrNotOwner)
	e.none("orders", -1) // the queue serves local partitions only
}

// ensure that every stored payload, JSON or not, renders through the one
// envelope into valid JSON that gives the bytes back (story F8; conformance
// 102-105).
func TestNonJSONPayloadsRender(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("mixed", 1, nil, nil)
	payloads := []string{`{"order_id":"ord_123"}`, "hello-v1", "42", "\xff\xfe\x00", " [1, 2] "}
	e.produce(tp, 0, payloads...)
	for _, want := range payloads {
		d := e.one("mixed", 0)
		env := domain.AppendEnvelope(nil, d)
		var got struct {
			Payload         json.RawMessage `json:"payload"`
			PayloadEncoding string          `json:"payload_encoding"`
			ReceiptHandle   string          `json:"receipt_handle"`
		}
		if err := json.Unmarshal(env, &got); err != nil {
			t.Fatalf("payload %q: envelope %s is not JSON: %v", want, env, err)
		}
		if got.ReceiptHandle != d.Handle.String() {
			t.Fatalf("handle %q", got.ReceiptHandle)
		}
		if back := decodePayload(t, got.Payload, got.PayloadEncoding); back != want && !json.Valid([]byte(want)) {
			t.Fatalf("payload %q came back as %q", want, back)
		}
		e.ack("mixed", d)
	}
}

func decodePayload(t *testing.T, raw json.RawMessage, encoding string) string {
	t.Helper()
	if encoding == "base64" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// ensure that a batch consume leases each message separately with its own
// handle, up to max and within the in-flight cap, and takes a pinned
// partition alone (conformance 209, 214, 215).
func TestBatchConsume(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 2, func(c *meta.CreateTopic) { c.MaxInFlight = 2 }, nil)
	e.produce(tp, 0, "a", "b", "c", "d", "e")
	e.produce(tp, 1, "x")
	ds := e.consume(consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 10, Pinned: true, Partition: 0})
	if len(ds) != 2 || ds[0].Handle.Nonce == ds[1].Handle.Nonce || ds[0].Partition != 0 || ds[1].Partition != 0 {
		t.Fatalf("pinned batch under cap 2: %+v", ds)
	}
	ds = e.consume(consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 10})
	if len(ds) != 1 || ds[0].Partition != 1 {
		t.Fatalf("queue batch: %d deliveries", len(ds))
	}
	_, err := e.svc.Consume(context.Background(), consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 101})
	wantErr(t, err, domain.ErrInvalidArgument)
}

// ensure that one batch pass stops reserving once keys and payloads reach
// 4 MiB, keeping the record that crosses it (internals.md §5.6).
func TestBatchScanStopsAtFourMiB(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("big", 1, nil, nil)
	big := strings.Repeat("a", 1_500_000)
	e.produce(tp, 0, big, big, big, big, big)
	ds := e.consume(consume.Request{Topic: "big", Mode: consume.ModeBatch, Max: 10})
	if len(ds) != 3 {
		t.Fatalf("%d records in one pass, want 3 (the third crosses 4 MiB)", len(ds))
	}
}

// ensure that an answer holds at most 8 MiB of encoded envelopes (never
// fewer than one) and that the rest are released at once as nacks.
func TestBatchReplyStopsAtEightMiB(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("escaped", 1, nil, nil)
	ctl := strings.Repeat("\x01", 1<<20) // 6 encoded bytes per stored byte
	e.produce(tp, 0, ctl, ctl)
	ds := e.consume(consume.Request{Topic: "escaped", Mode: consume.ModeBatch, Max: 10})
	if len(ds) != 1 {
		t.Fatalf("%d envelopes answered, want 1", len(ds))
	}
	if got := e.metrics.Count("nack escaped"); got != 1 {
		t.Fatalf("released records counted as %d nacks, want 1", got)
	}
	if d := e.one("escaped", 0); d.Record.Offset != 1 {
		t.Fatalf("released record not available at once: got %d", d.Record.Offset)
	}
}

// ensure that queue consumers start from a rotating partition, so they
// spread over partitions.
func TestQueueConsumeRotates(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("spread", 3, nil, nil)
	for p := range int32(3) {
		e.produce(tp, p, "a", "b")
	}
	seen := map[int32]bool{}
	for range 3 {
		seen[e.one("spread", -1).Partition] = true
	}
	if len(seen) < 2 {
		t.Fatalf("three consumes all started on %v", seen)
	}
}

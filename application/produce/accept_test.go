package produce_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

func pin(p int32) *int32 { return &p }

// Ensure that an accepted produce is durable in the WAL with the topic's
// incarnation, its key, the clock's time and the key's partition.
func TestAcceptAppendsDurableRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, 3)
	e.produce(t, "orders", "customer-42", `{"order_id":"ord_124"}`)
	got := e.walRecords(t)
	if len(got) != 1 {
		t.Fatalf("WAL holds %d records, want 1", len(got))
	}
	rec := got[0].Record
	want := domain.IngressRecord{
		Topic: "orders", TopicID: id, Key: []byte("customer-42"),
		Partition: domain.KeyPartition([]byte("customer-42"), 3), CreatedAtMs: e.clock.Now().UnixMilli(),
		Payload: []byte(`{"order_id":"ord_124"}`),
	}
	if rec.Topic != want.Topic || rec.TopicID != want.TopicID || !bytes.Equal(rec.Key, want.Key) ||
		rec.Partition != want.Partition || rec.CreatedAtMs != want.CreatedAtMs || !bytes.Equal(rec.Payload, want.Payload) {
		t.Fatalf("record %+v, want %+v", rec, want)
	}
}

// Ensure that every refusal of api.md §2.13 is returned as its sentinel and
// stores nothing; a non-delay child and a 1 MiB payload are accepted.
func TestAcceptRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.createTopic(t, "delayed", 2, 3)
	e.createTopic(t, "plain-child", 3, 3)
	e.propose(t, &meta.AttachChild{Parent: "t", Child: "delayed", Epoch: topicID(90), DelayMs: 60_000})
	e.propose(t, &meta.AttachChild{Parent: "t", Child: "plain-child", Epoch: topicID(91)})
	cases := []struct {
		name string
		req  produce.Request
		want error
	}{
		{"empty_payload", produce.Request{Topic: "t"}, domain.ErrEmptyMessage},
		{"payload_over_1_MiB", produce.Request{Topic: "t", Payload: make([]byte, produce.MessageMaxBytes+1)}, domain.ErrRecordTooLarge},
		{"unknown_topic", produce.Request{Topic: "missing", Payload: []byte("x")}, domain.ErrTopicNotFound},
		{"delay_child", produce.Request{Topic: "delayed", Payload: []byte("x")}, domain.ErrDelayedChildProduce},
		{"pin_out_of_range", produce.Request{Topic: "t", Partition: pin(3), Payload: []byte("x")}, domain.ErrPartitionOutOfRange},
		{"negative_pin", produce.Request{Topic: "t", Partition: pin(-1), Payload: []byte("x")}, domain.ErrInvalidArgument},
	}
	for _, tc := range cases {
		if err := e.svc.Accept(context.Background(), tc.req); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := e.wal.DurableNext(); n != 0 {
		t.Fatalf("refusals stored %d records", n)
	}
	if n := e.metrics.Count("produce_rejected delayed/delayed_child"); n != 1 {
		t.Fatalf("delayed_child rejections counted %d, want 1", n)
	}
	e.produce(t, "plain-child", "", "x")
	e.produce(t, "t", "", string(make([]byte, produce.MessageMaxBytes)))
	if n := e.wal.DurableNext(); n != 2 {
		t.Fatalf("accepted %d records, want 2", n)
	}
}

// Ensure that a pin beats the key, a key always picks the same partition,
// and keyless produces rotate through every partition evenly and are
// stored without a key (conformance 92, 93, 94, 187).
func TestAcceptPartitionChoice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.produce(t, "t", "same", "pinned", 2)
	for range 5 {
		e.produce(t, "t", "same", "keyed")
	}
	for range 9 {
		e.produce(t, "t", "", "keyless")
	}
	perPartition := map[int32]int{}
	for i, en := range e.walRecords(t) {
		r := en.Record
		switch {
		case i == 0 && r.Partition != 2:
			t.Errorf("pinned record in partition %d, want 2", r.Partition)
		case i >= 1 && i <= 5 && r.Partition != domain.KeyPartition([]byte("same"), 3):
			t.Errorf("keyed record %d in partition %d", i, r.Partition)
		case i > 5:
			if len(r.Key) != 0 {
				t.Errorf("keyless record stored with key %q", r.Key)
			}
			perPartition[r.Partition]++
		}
	}
	for p := range int32(3) {
		if perPartition[p] != 3 {
			t.Fatalf("keyless spread %v, want 3 per partition", perPartition)
		}
	}
}

// Ensure that each topic's rotation starts at a random partition.
func TestAcceptRotationStartsAtRandom(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	starts := map[int32]bool{}
	for i := range 60 {
		name := "t" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		e.createTopic(t, name, 100+i, 3)
		e.produce(t, name, "", "x")
	}
	for _, en := range e.walRecords(t) {
		starts[en.Record.Partition] = true
	}
	if len(starts) < 2 {
		t.Fatalf("60 rotations all started on partition(s) %v", starts)
	}
}

// Ensure that a schema topic validates every payload against its current
// schema: a refusal is a 400 refusal counted as "schema" that stores
// nothing, a busy validator is unavailable, and a schema added later takes
// effect at once.
func TestAcceptSchema(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "free", 1, 3)
	e.produce(t, "free", "", fake.RefuseMarker)
	e.propose(t, &meta.PutSchemaIf{PutSchema: meta.PutSchema{Topic: "free", Version: 1, Schema: []byte(`{"type":"object"}`)}, ID: topicID(1)})
	err := e.svc.Accept(context.Background(), produce.Request{Topic: "free", Payload: []byte(`{"x":` + fake.RefuseMarker + `}`)})
	var r *domain.Refusal
	if !errors.Is(err, domain.ErrInvalidArgument) || !errors.As(err, &r) || r.Detail != "invalid argument: schema: payload refused by the fake" {
		t.Fatalf("schema refusal: %v", err)
	}
	if err := e.svc.Accept(context.Background(), produce.Request{Topic: "free", Payload: []byte(`{"id":1} {"id":2}`)}); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("trailing data on a schema topic: %v (conformance 186)", err)
	}
	e.schemas.SetBusy(domain.Refuse(domain.ErrUnavailable, "schema: validation capacity busy, retry"))
	if err := e.svc.Accept(context.Background(), produce.Request{Topic: "free", Payload: []byte(`{}`)}); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("busy validator: %v", err)
	}
	e.schemas.SetBusy(nil)
	e.produce(t, "free", "", `{"ok":true}`)
	if n := e.wal.DurableNext(); n != 2 {
		t.Fatalf("WAL holds %d records, want 2", n)
	}
	if n := e.metrics.Count("produce_rejected free/schema"); n != 2 {
		t.Fatalf("schema rejections counted %d, want 2", n)
	}
}

// Ensure that a WAL failure reaches the caller as ErrWALFailed.
func TestAcceptWALFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	e.wal.FailNextAppend(nil)
	if err := e.svc.Accept(context.Background(), produce.Request{Topic: "t", Payload: []byte("x")}); !errors.Is(err, domain.ErrWALFailed) {
		t.Fatalf("Accept = %v, want ErrWALFailed", err)
	}
}

// Ensure that constructors reject nil dependencies.
func TestConstructorsRejectNil(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(){
		"service":    func() { produce.NewService(produce.ServiceDeps{}) },
		"committer":  func() { produce.NewCommitter(produce.CommitterDeps{}) },
		"dispatcher": func() { produce.NewDispatcher(produce.DispatcherDeps{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on nil dependencies", name)
				}
			}()
			f()
		}()
	}
}

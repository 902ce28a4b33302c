package produce_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

func msg(key, payload string, p ...int32) produce.Message {
	m := produce.Message{Key: []byte(key), Payload: []byte(payload)}
	if len(p) > 0 {
		m.Partition = &p[0]
	}
	return m
}

// Ensure that a batch lands in one append, in batch order, sharing one
// accept time and one incarnation; keyless messages take consecutive turns
// (conformance 192 on the accepting side).
func TestAcceptBatchAppendsInOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.produce(t, "t", "", "before")
	batch := []produce.Message{msg("", "a", 0), msg("", "b", 0), msg("", "c", 0)}
	for range 9 {
		batch = append(batch, msg("", "rr"))
	}
	if err := e.svc.AcceptBatch(context.Background(), "t", batch); err != nil {
		t.Fatal(err)
	}
	got := e.walRecords(t)[1:]
	if len(got) != len(batch) {
		t.Fatalf("%d records appended, want %d", len(got), len(batch))
	}
	spread := map[int32]int{}
	for i, en := range got {
		r := en.Record
		if string(r.Payload) != string(batch[i].Payload) || r.TopicID != id || r.CreatedAtMs != got[0].Record.CreatedAtMs {
			t.Fatalf("record %d = %+v", i, r)
		}
		if i < 3 && r.Partition != 0 {
			t.Fatalf("pinned record %d in partition %d", i, r.Partition)
		}
		if i >= 3 {
			spread[r.Partition]++
		}
	}
	if spread[0] != 3 || spread[1] != 3 || spread[2] != 3 {
		t.Fatalf("keyless batch spread %v", spread)
	}
}

// Ensure that checks run in two passes over the whole batch (format, then
// schema and range), that the first failing message decides with its
// index, and that a refused batch stores nothing (conformance 201, 202,
// 203).
func TestAcceptBatchTwoPasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.propose(t, &meta.CreateTopicWith{
		CreateTopic: meta.CreateTopic{Name: "s", ID: topicID(1), Partitions: 3, VisibilityTimeoutMs: 30_000},
		Schema:      []byte(`{"type":"object"}`),
	})
	refused := `{"amount":` + fake.RefuseMarker + `}`
	cases := []struct {
		name  string
		batch []produce.Message
		index int
		want  error
	}{
		{"format_before_range", []produce.Message{msg("", "{}", 7), msg("", "")}, 1, domain.ErrEmptyMessage},
		{"negative_pin", []produce.Message{msg("", "{}"), msg("", "{}", -1)}, 1, domain.ErrInvalidArgument},
		{"too_large", []produce.Message{msg("", string(make([]byte, produce.MessageMaxBytes+1)))}, 0, domain.ErrRecordTooLarge},
		{"schema_first_failure", []produce.Message{msg("", "{}"), msg("", refused), msg("", "{}", 9)}, 1, domain.ErrInvalidArgument},
		{"range", []produce.Message{msg("", "{}"), msg("", "{}"), msg("", "{}", 99)}, 2, domain.ErrPartitionOutOfRange},
	}
	for _, tc := range cases {
		err := e.svc.AcceptBatch(context.Background(), "s", tc.batch)
		var me *produce.MessageError
		if !errors.As(err, &me) || me.Index != tc.index || !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want message %d: %v", tc.name, err, tc.index, tc.want)
		}
	}
	if n := e.wal.DurableNext(); n != 0 {
		t.Fatalf("refused batches stored %d records", n)
	}
}

// Ensure that empty and oversized batches and topic refusals carry no
// message index.
func TestAcceptBatchWholeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	tooMany := make([]produce.Message, produce.BatchMaxMessages+1)
	for i := range tooMany {
		tooMany[i] = msg("", "x")
	}
	var r *domain.Refusal
	if err := e.svc.AcceptBatch(context.Background(), "t", nil); !errors.As(err, &r) || r.Detail != "messages required" {
		t.Fatalf("empty batch: %v", err)
	}
	if err := e.svc.AcceptBatch(context.Background(), "t", tooMany); !errors.As(err, &r) || r.Detail != "too many messages: 1001 (max 1000)" {
		t.Fatalf("1001 messages: %v", err)
	}
	if err := e.svc.AcceptBatch(context.Background(), "missing", []produce.Message{msg("", "x")}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("missing topic: %v", err)
	}
	if err := e.svc.AcceptBatch(context.Background(), "t", tooMany[:produce.BatchMaxMessages]); err != nil {
		t.Fatalf("1000 messages: %v", err)
	}
}

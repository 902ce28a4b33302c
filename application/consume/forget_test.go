package consume_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// deleteTopic runs the delete path as the topics use case will: the
// metadata entry, the partition data, then Forget.
func (e *env) deleteTopic(tp meta.Topic) {
	e.t.Helper()
	e.propose(&meta.DeleteTopicIf{Name: tp.Name, ID: tp.ID})
	for p := range tp.Partitions {
		ref := domain.PartitionRef{Topic: tp.Name, TopicID: domain.TopicID(tp.ID), Partition: p}
		if err := e.logs.Remove(ref); err != nil {
			e.t.Fatal(err)
		}
	}
	e.offsets.RemoveTopic(tp.Name, domain.TopicID(tp.ID))
	e.svc.Forget(tp.Name, domain.TopicID(tp.ID))
}

// ensure that deleting a topic while acks are in flight and recreating it
// at once never lets the new incarnation adopt the old frontier: its first
// consume starts at offset 0 (stories F14, F29).
func TestDeleteAndRecreateStartsAtZero(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{DurabilityInterval: 10 * time.Millisecond})
	e.run()
	old := e.createTopic("orders", 1, nil, nil)
	e.produce(old, 0, "0", "1", "2", "3", "4", "5", "6", "7")
	var ds []domain.Delivery
	for range 8 {
		ds = append(ds, e.one("orders", 0))
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // an ack storm racing the delete
		defer wg.Done()
		for _, d := range ds {
			_ = e.svc.Ack(context.Background(), "orders", *d.Handle)
		}
	}()
	e.deleteTopic(old)
	wg.Wait()
	_, err := e.svc.Consume(t.Context(), consume.Request{Topic: "orders"})
	wantErr(t, err, domain.ErrTopicNotFound)
	wantErr(t, e.svc.Ack(t.Context(), "orders", *ds[0].Handle), domain.ErrTopicNotFound)

	fresh := e.createTopic("orders", 1, nil, nil)
	e.produce(fresh, 0, "new-0", "new-1")
	d := e.one("orders", 0)
	if d.Record.Offset != 0 || string(d.Record.Payload) != "new-0" {
		t.Fatalf("recreated topic served offset %d %q", d.Record.Offset, d.Record.Payload)
	}
	e.ack("orders", d)
	e.restart(e.offsets, true)
	if d := e.one("orders", 0); d.Record.Offset != 1 {
		t.Fatalf("after restart the recreated topic served %d, want 1", d.Record.Offset)
	}
}

// ensure that consumers parked on a deleted topic are answered at once.
func TestForgetAnswersParkedConsumers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	got := e.longPoll(t.Context(), consume.Request{Topic: "orders", Wait: 10 * time.Second})
	e.parked(1)
	e.deleteTopic(tp)
	if r := <-got; r.err != nil || len(r.ds) != 0 || r.at > 5*time.Second {
		t.Fatalf("%+v", r)
	}
}

// ensure that a batch ack settles each handle independently and answers
// one outcome per handle, in order (conformance 217, 218, 219).
func TestAckBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 1000 }, nil)
	e.produce(tp, 0, "0", "1", "2", "3")
	ds := e.consume(consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 4})
	if len(ds) != 4 {
		t.Fatalf("%d", len(ds))
	}
	hs := []domain.ReceiptHandle{*ds[0].Handle, *ds[1].Handle, *ds[0].Handle}
	errs, err := e.svc.AckBatch(t.Context(), "orders", hs, consume.OpAck)
	if err != nil || errs[0] != nil || errs[1] != nil {
		t.Fatalf("%v %v", errs, err)
	}
	wantErr(t, errs[2], domain.ErrLeaseGone)

	errs, err = e.svc.AckBatch(t.Context(), "orders", []domain.ReceiptHandle{*ds[2].Handle}, consume.OpExtend)
	if err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	errs, err = e.svc.AckBatch(t.Context(), "orders", []domain.ReceiptHandle{*ds[3].Handle}, consume.OpNack)
	if err != nil || errs[0] != nil {
		t.Fatal(errs, err)
	}
	if d := e.one("orders", 0); d.Record.Offset != 3 {
		t.Fatalf("nacked record not available: got %d", d.Record.Offset)
	}
	e.clock.Advance(900 * time.Millisecond)
	e.none("orders", 0) // the extended lease still holds
	_, err = e.svc.AckBatch(t.Context(), "missing", hs, consume.OpAck)
	wantErr(t, err, domain.ErrTopicNotFound)
}

// ensure that ForgetPartition drops one partition's in-memory progress, so
// the next consume serves from what the offset store holds (a move's
// install of a newer copy, internals.md §11.3 step 6) rather than from
// state left by an earlier ownership.
func TestForgetPartitionReloadsProgressFromDisk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4", "5", "6")
	for range 2 {
		e.ack("orders", e.one("orders", 0))
	}
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
	e.svc.ForgetPartition(ref)
	// The installed copy's consumer position: everything through 4 settled.
	if err := e.offsets.Write(ref, ports.ConsumerOffsets{Committed: 4}); err != nil {
		t.Fatal(err)
	}
	if err := e.offsets.Sync(ref); err != nil {
		t.Fatal(err)
	}
	e.svc.ForgetPartition(ref)
	if d := e.one("orders", 0); d.Record.Offset != 5 {
		t.Fatalf("after the forget the partition served offset %d, want 5", d.Record.Offset)
	}
}

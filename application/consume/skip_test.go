package consume_test

import (
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// ensure that a frontier retention outran jumps to the oldest retained
// offset, is persisted, and that nothing reaped is delivered (internals.md
// §5.2).
func TestRetentionOutranTheConsumer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("aging", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2")
	d := e.one("aging", 0) // leased, then reaped under its consumer
	e.logs.SetRetention("aging", domain.TopicID(tp.ID), time.Minute)
	e.logs.Advance(2 * time.Minute)
	e.produce(tp, 0, "3", "4")
	if got := e.one("aging", 0); got.Record.Offset != 3 {
		t.Fatalf("got offset %d, want the oldest retained 3", got.Record.Offset)
	}
	wantErr(t, e.svc.Ack(t.Context(), "aging", *d.Handle), domain.ErrLeaseGone)
	if err := e.svc.Close(); err != nil {
		t.Fatal(err)
	}
	ref := domain.PartitionRef{Topic: "aging", TopicID: domain.TopicID(tp.ID), Partition: 0}
	if got := e.offsets.Durable(ref); got.Committed != 2 {
		t.Fatalf("persisted frontier %d, want the jump to 2", got.Committed)
	}
}

// ensure that unreadable records are skipped by queue consumers with the
// reservation's nonce: neighbours delivered, the corrupt offsets never,
// the counter set, and the frontier passes them and survives a restart
// (story F15).
func TestCorruptRecordsAreSkipped(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("flaky", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4")
	e.reader.setCorrupt(1, 2)
	var got []int64
	for range 3 {
		d := e.one("flaky", 0)
		got = append(got, d.Record.Offset)
		e.ack("flaky", d)
	}
	if got[0] != 0 || got[1] != 3 || got[2] != 4 {
		t.Fatalf("delivered %v, want [0 3 4]", got)
	}
	e.none("flaky", 0)
	if n := e.metrics.Count("corrupt_skipped flaky/0"); n != 2 {
		t.Fatalf("corrupt counter %d, want 2", n)
	}
	e.restart(e.offsets, true)
	e.none("flaky", 0)
	ref := domain.PartitionRef{Topic: "flaky", TopicID: domain.TopicID(tp.ID), Partition: 0}
	if o, _ := e.offsets.Load(ref); o.Committed != 4 {
		t.Fatalf("frontier after restart %+v, want 4", o)
	}
}

// ensure that a restart keeps the frontier and the acked-ahead set: only
// unacked messages are redelivered, after a clean stop and after a machine
// crash once the committer synced.
func TestRestartKeepsFrontierAndAckedAhead(t *testing.T) {
	t.Parallel()
	for _, clean := range []bool{true, false} {
		name := map[bool]string{true: "clean_stop", false: "machine_crash"}[clean]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, consume.Options{DurabilityInterval: 10 * time.Millisecond})
			e.run()
			tp := e.createTopic("orders", 1, nil, nil)
			e.produce(tp, 0, "0", "1", "2", "3", "4")
			var ds []domain.Delivery
			for range 5 {
				ds = append(ds, e.one("orders", 0))
			}
			for _, i := range []int{0, 1, 3} {
				e.ack("orders", ds[i])
			}
			ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
			var next ports.OffsetStore = e.offsets
			if !clean {
				eventually(t, 5*time.Second, "acks synced", func() bool {
					o := e.offsets.Durable(ref)
					return o.Committed == 1 && len(o.AckedAhead) == 1 && o.AckedAhead[0] == 3
				})
				next = e.offsets.Crash()
			}
			e.restart(next, clean)
			var again []int64
			for range 2 {
				again = append(again, e.one("orders", 0).Record.Offset)
			}
			if again[0] != 2 || again[1] != 4 {
				t.Fatalf("redelivered %v, want [2 4]", again)
			}
			e.none("orders", 0)
		})
	}
}

// ensure that the committer writes often, syncs within the durability
// interval, and that a failed sync is rewritten and synced later.
func TestCommitterRetriesAFailedSync(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{DurabilityInterval: 20 * time.Millisecond})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1")
	e.offsets.FailNextSync(nil)
	e.run()
	d := e.one("orders", 0)
	e.ack("orders", d)
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
	eventually(t, 5*time.Second, "frontier synced after a failed sync", func() bool {
		return e.offsets.Durable(ref).Committed == 0
	})
	if w, s, _ := e.offsets.Counts(); w < 2 || s < 1 {
		t.Fatalf("writes %d syncs %d: the window was not rewritten", w, s)
	}
}

// ensure that Close persists every frontier exactly, levelling
// consumer.offset too.
func TestCloseWritesEverythingExactly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 2, nil, nil)
	e.produce(tp, 0, "0", "1", "2")
	e.produce(tp, 1, "0")
	for range 4 {
		e.ack("orders", e.one("orders", -1))
	}
	if err := e.svc.Close(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]int64{0: 2, 1: 0} {
		ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: p}
		if got := e.offsets.Crash().Durable(ref); got.Committed != want {
			t.Fatalf("partition %d persisted %d, want %d", p, got.Committed, want)
		}
	}
	if _, _, levels := e.offsets.Counts(); levels != 2 {
		t.Fatalf("%d consumer.offset levels, want 2", levels)
	}
	_, err := e.svc.Consume(t.Context(), consume.Request{Topic: "orders"})
	wantErr(t, err, domain.ErrClosed)
}

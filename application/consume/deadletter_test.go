package consume_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// setDeadLetter gives t a dead-letter policy: after max receives, to dlq.
func (e *env) setDeadLetter(t meta.Topic, dlq string, max uint32) {
	e.t.Helper()
	e.propose(&meta.SetTopicDeadLetter{Name: t.Name, ID: t.ID, DeadLetter: &meta.DeadLetter{Topic: dlq, MaxReceiveCount: max}})
}

// nack nacks d without a delay.
func (e *env) nack(topic string, d domain.Delivery) {
	e.t.Helper()
	if err := e.svc.Nack(context.Background(), topic, *d.Handle); err != nil {
		e.t.Fatalf("nack %s: %v", d.Handle, err)
	}
}

// letters waits for n dead letters and parses them.
func (e *env) letters(n int) []deadletter.Letter {
	e.t.Helper()
	eventually(e.t, 5*time.Second, "dead letters written", func() bool { return len(e.sink.Letters()) >= n })
	var out []deadletter.Letter
	for _, w := range e.sink.Letters() {
		l, err := deadletter.ParseLetter(w.Payload)
		if err != nil {
			e.t.Fatal(err)
		}
		if w.Topic != "orders-dlq" {
			e.t.Fatalf("dead letter written to %q", w.Topic)
		}
		out = append(out, l)
	}
	if len(out) != n {
		e.t.Fatalf("%d dead letters, want %d", len(out), n)
	}
	return out
}

// settled waits until offset off of topic/0 is settled in its origin.
func (e *env) settled(off int64) {
	e.t.Helper()
	eventually(e.t, 5*time.Second, "origin settled", func() bool {
		st := e.svc.Stats()
		return len(st) == 1 && st[0].Committed >= off && st[0].InFlight == 0
	})
}

// Ensure that a poison message nacked every time is delivered exactly its
// maximum receive count, then goes to the dead-letter topic with its origin
// and count, is settled in its origin, and the messages behind it flow.
func TestPoisonMessageGoesToTheDeadLetterTopicAfterMaxReceives(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 3)
	e.produce(tp, 0, "poison", "fine")
	for range 3 {
		d := e.one("orders", 0)
		if d.Record.Offset != 0 {
			t.Fatalf("got offset %d, want the poison message", d.Record.Offset)
		}
		e.nack("orders", d)
	}
	d := e.one("orders", 0)
	if d.Record.Offset != 1 {
		t.Fatalf("4th consume got offset %d, want 1 (the poison message dead-lettered)", d.Record.Offset)
	}
	e.ack("orders", d)
	l := e.letters(1)[0]
	if l.Topic != "orders" || l.Partition != 0 || l.Offset != 0 || l.ReceiveCount != 3 || string(l.Payload) != "poison" {
		t.Fatalf("letter %+v", l)
	}
	e.settled(1)
	if got := e.metrics.Count("dead_lettered orders"); got != 1 {
		t.Fatalf("dead_lettered metric %d, want 1", got)
	}
	e.none("orders", 0)
}

// Ensure that a lapsed lease counts as a receive, and that a replay (a
// peek) counts nothing.
func TestLapsedLeasesCountAndReplaysDoNot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, func(c *meta.CreateTopic) { c.VisibilityTimeoutMs = 1000 }, nil)
	e.setDeadLetter(tp, "orders-dlq", 2)
	e.produce(tp, 0, "slow")
	for range 5 {
		if ds := e.consume(consume.Request{Topic: "orders", Mode: consume.ModeReplay, Partition: 0, Offset: 0}); len(ds) != 1 {
			t.Fatalf("replay: %d records", len(ds))
		}
	}
	for range 2 {
		e.one("orders", 0) // never settled: the lease lapses
		e.clock.Advance(1001 * time.Millisecond)
	}
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.ReceiveCount != 2 {
		t.Fatalf("letter after %d receives, want 2", l.ReceiveCount)
	}
	e.settled(0)
}

// Ensure that receive counts survive a restart (a crash: nothing closed),
// so the maximum holds across it.
func TestReceiveCountsSurviveARestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 3)
	e.produce(tp, 0, "poison")
	e.nack("orders", e.one("orders", 0))
	e.nack("orders", e.one("orders", 0))
	e.restart(e.offsets.Crash(), false)
	e.nack("orders", e.one("orders", 0))
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.ReceiveCount != 3 {
		t.Fatalf("letter after %d receives, want 3", l.ReceiveCount)
	}
}

// Ensure that a count that cannot be made durable hands nothing out, and
// the next consume counts from where the disk is.
func TestReceiveCountNotPersistedDeliversNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 1)
	e.produce(tp, 0, "x")
	e.receives.FailNextAppend(errors.New("disk full"))
	if _, err := e.svc.Consume(context.Background(), consume.Request{Topic: "orders", Mode: consume.ModePinned, Partition: 0}); err == nil {
		t.Fatal("a pinned consume whose count failed to persist answered no error")
	}
	d := e.one("orders", 0)
	e.nack("orders", d)
	e.none("orders", 0)
	if l := e.letters(1)[0]; l.ReceiveCount != 1 {
		t.Fatalf("letter after %d receives, want 1 (the failed count is not one)", l.ReceiveCount)
	}
}

// Ensure that while the dead-letter topic cannot be written the message
// stays in its origin and is never delivered from there again; the write
// is retried, also after a restart, until it goes through.
func TestDeadLetterWriteRetriedAndNeverRedelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 1)
	e.produce(tp, 0, "poison")
	e.sink.Fail(domain.ErrTopicNotFound)
	e.nack("orders", e.one("orders", 0))
	e.none("orders", 0) // the attempt that dead-letters it, and fails
	eventually(t, 5*time.Second, "the failed write held back", func() bool {
		st := e.svc.Stats()
		return len(st) == 1 && st[0].Deferred == 1
	})
	if n := e.metrics.Count("dead_letter_failed orders"); n != 1 {
		t.Fatalf("failed dead-letter writes counted %d, want 1", n)
	}
	e.clock.Advance(5 * time.Second)
	e.restart(e.offsets.Crash(), false)
	e.sink.Fail(nil)
	e.none("orders", 0) // after the restart: the intent holds, it goes to the dead-letter topic
	if l := e.letters(1)[0]; l.ReceiveCount != 1 || string(l.Payload) != "poison" {
		t.Fatalf("letter %+v", l)
	}
	e.settled(0)
}

// Ensure that a batch consume counts its records in one durable append and
// still fills up past a dead-lettered record.
func TestBatchConsumeCountsOnceAndFillsPastDeadLetters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 1)
	e.produce(tp, 0, "a", "b", "c")
	first := e.consume(consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 3})
	if len(first) != 3 {
		t.Fatalf("batch of %d, want 3", len(first))
	}
	if appends, _ := e.receives.Counts(); appends != 1 {
		t.Fatalf("%d appends for one batch, want 1", appends)
	}
	e.nack("orders", first[0])
	e.produce(tp, 0, "d", "e")
	next := e.consume(consume.Request{Topic: "orders", Mode: consume.ModeBatch, Max: 2})
	if len(next) != 2 || next[0].Record.Offset != 3 || next[1].Record.Offset != 4 {
		t.Fatalf("second batch %v, want offsets 3 and 4", offsetsOf(next))
	}
	if l := e.letters(1)[0]; l.Offset != 0 {
		t.Fatalf("letter of offset %d, want 0", l.Offset)
	}
}

// Ensure that a topic without a dead-letter policy counts nothing.
func TestNoPolicyCountsNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "x")
	for range 3 {
		e.nack("orders", e.one("orders", 0))
	}
	if appends, _ := e.receives.Counts(); appends != 0 {
		t.Fatalf("%d appends without a policy", appends)
	}
}

func offsetsOf(ds []domain.Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Record.Offset
	}
	return out
}

// Ensure that a grown receive log is compacted to the offsets not settled
// for good (durably past the frontier), and not again until it doubles.
func TestReceiveLogCompactsToUnsettledOffsets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{DurabilityInterval: 10 * time.Millisecond})
	e.run()
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 5)
	e.produce(tp, 0, "a", "b", "c")
	e.ack("orders", e.one("orders", 0))
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
	eventually(t, 5*time.Second, "the ack durable", func() bool { return e.offsets.Durable(ref).Committed >= 0 })
	e.receives.SizeOverride = 300 << 10
	e.one("orders", 0)
	recs := e.receives.Records(ref)
	if _, compacts := e.receives.Counts(); compacts != 1 || len(recs) != 1 || recs[0].Offset != 1 {
		t.Fatalf("after compaction %d compactions, records %+v; want 1 and only offset 1's count", compacts, recs)
	}
	e.one("orders", 0)
	if _, compacts := e.receives.Counts(); compacts != 1 {
		t.Fatalf("%d compactions, want 1 until the log doubles", compacts)
	}
}

// ensure that a reservation a move's freeze overtook before its receive was
// counted is given back uncounted and unread, so no count lands after the
// listing the move copies, and that it is delivered, counted once, when the
// freeze ends (internals.md §11.3 step 3).
func TestFreezeBetweenReserveAndCountGivesTheLeaseBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.setDeadLetter(tp, "orders-dlq", 3)
	e.produce(tp, 0, "0")
	ref := domain.PartitionRef{Topic: "orders", TopicID: domain.TopicID(tp.ID), Partition: 0}
	e.receives.OnLoad = func(r domain.PartitionRef) { e.logs.SetFrozen(r, true) } // after the reservation's check
	e.none("orders", 0)
	if recs, _ := e.receives.Load(ref); len(recs) != 0 {
		t.Fatalf("counted under the freeze: %+v", recs)
	}
	if n := e.svc.InFlight(ref); n != 0 {
		t.Fatalf("in flight %d under the freeze, want 0 (the lease given back)", n)
	}
	e.logs.SetFrozen(ref, false)
	if d := e.one("orders", 0); d.Record.Offset != 0 {
		t.Fatalf("after the freeze: offset %d", d.Record.Offset)
	}
	if recs, _ := e.receives.Load(ref); len(recs) != 1 || recs[0].Count != 1 {
		t.Fatalf("receive records after the freeze %+v, want one count of 1", recs)
	}
}

package produce_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// ownedService is e's produce service with single produces to partitions
// this node owns committed straight into their logs (internals.md §3.10).
func (e *env) ownedService() *produce.Service {
	return produce.NewService(produce.ServiceDeps{Topics: e.store, WAL: e.wal, Schemas: e.schemas, Clock: e.clock, Metrics: e.metrics, Owned: e.owner})
}

func (e *env) setLatch(t *testing.T) {
	t.Helper()
	if !e.latch.Ready(context.Background()) {
		t.Fatal("the ownership latch did not set")
	}
}

// Ensure that a single produce to a partition this node owns is committed
// into the partition's log, with its key and the commit time, and never
// written to the WAL.
func TestAcceptCommitsAnOwnedPartitionStraightIntoItsLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, 3)
	e.assign(t, "orders", self)
	e.setLatch(t)
	svc := e.ownedService()
	if err := svc.Accept(context.Background(), produce.Request{Topic: "orders", Key: []byte("k"), Payload: []byte("p1")}); err != nil {
		t.Fatal(err)
	}
	if got := e.walRecords(t); len(got) != 0 {
		t.Fatalf("WAL holds %d records, want none", len(got))
	}
	recs := e.records(t, "orders", id, domain.KeyPartition([]byte("k"), 3))
	if len(recs) != 1 || string(recs[0].Key) != "k" || string(recs[0].Payload) != "p1" || recs[0].CommittedAtMs != e.clock.Now().UnixMilli() {
		t.Fatalf("partition holds %+v, want the record committed now", recs)
	}
}

// Ensure that a produce goes to the WAL when this node may not commit it
// itself: the partition is another node's, or the ownership latch is not
// set yet.
func TestAcceptAppendsToTheWALWhenThePartitionIsNotOwnedHere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		owner string
		latch bool
	}{
		{"another_owner", "n2", true},
		{"latch_not_set", self, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.createTopic(t, "orders", 1, 1)
			e.assign(t, "orders", tc.owner)
			if tc.latch {
				e.setLatch(t)
			}
			if err := e.ownedService().Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("p")}); err != nil {
				t.Fatal(err)
			}
			if got := e.walRecords(t); len(got) != 1 {
				t.Fatalf("WAL holds %d records, want 1", len(got))
			}
			if recs := e.records(t, "orders", id, 0); len(recs) != 0 {
				t.Fatalf("partition holds %d records, want none", len(recs))
			}
		})
	}
}

// Ensure that a failed commit to an owned partition leaves the record to
// the WAL, once: the produce is accepted and the log holds nothing.
func TestAcceptFallsBackToTheWALWhenTheOwnedCommitFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, 1)
	e.assign(t, "orders", self)
	e.setLatch(t)
	e.logs.FailNextCommit(nil)
	if err := e.ownedService().Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	if got := e.walRecords(t); len(got) != 1 || string(got[0].Record.Payload) != "p" {
		t.Fatalf("WAL holds %+v, want the record once", got)
	}
	if recs := e.records(t, "orders", id, 0); len(recs) != 0 {
		t.Fatalf("partition holds %d records, want none", len(recs))
	}
}

// Ensure that a caller gone before its owned commit ran gets its context's
// error and nothing is stored anywhere (no WAL copy a client never saw
// accepted, no record in the log).
func TestAcceptOfAGoneCallerStoresNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, 1)
	e.assign(t, "orders", self)
	e.setLatch(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := e.ownedService().Accept(ctx, produce.Request{Topic: "orders", Payload: []byte("p")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept = %v, want context.Canceled", err)
	}
	if got := e.walRecords(t); len(got) != 0 {
		t.Fatalf("WAL holds %d records, want none", len(got))
	}
	if recs := e.records(t, "orders", id, 0); len(recs) != 0 {
		t.Fatalf("partition holds %d records, want none", len(recs))
	}
}

// Ensure that a delayed produce to an owned partition is kept in the
// partition's schedule, not committed early and not written to the WAL.
func TestAcceptSchedulesADelayedProduceToAnOwnedPartition(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, 1)
	e.assign(t, "orders", self)
	e.setLatch(t)
	delay := int64(time.Minute / time.Millisecond)
	if err := e.ownedService().Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("later"), DelayMs: &delay}); err != nil {
		t.Fatal(err)
	}
	if got := e.walRecords(t); len(got) != 0 {
		t.Fatalf("WAL holds %d records, want none", len(got))
	}
	if recs := e.records(t, "orders", id, 0); len(recs) != 0 {
		t.Fatalf("partition holds %d records before the delay, want none", len(recs))
	}
	if n := len(e.sched.Held(domain.PartitionRef{Topic: "orders", TopicID: id, Partition: 0})); n != 1 {
		t.Fatalf("schedule holds %d records, want 1", n)
	}
}

// BenchmarkAccept is one single keyless produce of 256 bytes over the
// fakes: into the WAL (another node owns the partition), or committed
// straight into the owned partition's log. The fakes do no I/O, so this
// is the use case's own CPU and allocations; what the owned path saves on
// a node (a WAL fsync, a WAL read, a dispatcher hand-off) is in
// docs/performance.md.
func BenchmarkAccept(b *testing.B) {
	for _, owner := range []string{"n2", self} {
		name := "path=wal"
		if owner == self {
			name = "path=owned"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b)
			e.createTopic(b, "orders", 1, 6)
			e.assign(b, "orders", owner)
			e.latch.Ready(context.Background())
			svc := e.ownedService()
			req := produce.Request{Topic: "orders", Payload: make([]byte, 256)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := svc.Accept(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

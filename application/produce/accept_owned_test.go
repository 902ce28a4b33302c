package produce_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
)

// ownedEnv is an env whose topic "orders" (incarnation 1, partitions
// partitions) is placed on owner, with the ownership latch set when latch
// is, and a produce service that commits single produces to partitions this
// node owns straight into their logs (internals.md §3.10).
func ownedEnv(t testing.TB, owner string, partitions int32, latch bool) (*env, *produce.Service, domain.TopicID) {
	t.Helper()
	e := newEnv(t)
	id := e.createTopic(t, "orders", 1, partitions)
	e.assign(t, "orders", owner)
	if latch && !e.latch.Ready(context.Background()) {
		t.Fatal("the ownership latch did not set")
	}
	svc := produce.NewService(produce.ServiceDeps{Topics: e.store, WAL: e.wal, Schemas: e.schemas, Clock: e.clock, Metrics: e.metrics, Owned: e.owner})
	return e, svc, id
}

// stored checks how many records the WAL and partition p of "orders" hold.
func (e *env) stored(t *testing.T, id domain.TopicID, p int32, wantWAL, wantLog int) []domain.Record {
	t.Helper()
	if got := e.walRecords(t); len(got) != wantWAL {
		t.Fatalf("WAL holds %d records, want %d", len(got), wantWAL)
	}
	recs := e.records(t, "orders", id, p)
	if len(recs) != wantLog {
		t.Fatalf("partition %d holds %d records, want %d", p, len(recs), wantLog)
	}
	return recs
}

// Ensure that a single produce to a partition this node owns is committed
// into the partition's log, with its key and the commit time, and never
// written to the WAL.
func TestAcceptCommitsAnOwnedPartitionStraightIntoItsLog(t *testing.T) {
	t.Parallel()
	e, svc, id := ownedEnv(t, self, 3, true)
	if err := svc.Accept(context.Background(), produce.Request{Topic: "orders", Key: []byte("k"), Payload: []byte("p1")}); err != nil {
		t.Fatal(err)
	}
	recs := e.stored(t, id, domain.KeyPartition([]byte("k"), 3), 0, 1)
	if string(recs[0].Key) != "k" || string(recs[0].Payload) != "p1" || recs[0].CommittedAtMs != e.clock.Now().UnixMilli() {
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
			e, svc, id := ownedEnv(t, tc.owner, 1, tc.latch)
			if err := svc.Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("p")}); err != nil {
				t.Fatal(err)
			}
			e.stored(t, id, 0, 1, 0)
		})
	}
}

// Ensure that a failed commit to an owned partition leaves the record to
// the WAL, once: the produce is accepted and the log holds nothing.
func TestAcceptFallsBackToTheWALWhenTheOwnedCommitFails(t *testing.T) {
	t.Parallel()
	e, svc, id := ownedEnv(t, self, 1, true)
	e.logs.FailNextCommit(nil)
	if err := svc.Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	e.stored(t, id, 0, 1, 0)
	if got := e.walRecords(t); string(got[0].Record.Payload) != "p" {
		t.Fatalf("WAL holds %+v, want the record", got)
	}
}

// Ensure that a caller gone before its owned commit ran gets its context's
// error and nothing is stored anywhere (no WAL copy a client never saw
// accepted, no record in the log).
func TestAcceptOfAGoneCallerStoresNothing(t *testing.T) {
	t.Parallel()
	e, svc, id := ownedEnv(t, self, 1, true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := svc.Accept(ctx, produce.Request{Topic: "orders", Payload: []byte("p")}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Accept = %v, want context.Canceled", err)
	}
	e.stored(t, id, 0, 0, 0)
}

// Ensure that a delayed produce to an owned partition is kept in the
// partition's schedule, not committed early and not written to the WAL.
func TestAcceptSchedulesADelayedProduceToAnOwnedPartition(t *testing.T) {
	t.Parallel()
	e, svc, id := ownedEnv(t, self, 1, true)
	delay := int64(time.Minute / time.Millisecond)
	if err := svc.Accept(context.Background(), produce.Request{Topic: "orders", Payload: []byte("later"), DelayMs: &delay}); err != nil {
		t.Fatal(err)
	}
	e.stored(t, id, 0, 0, 0)
	if n := len(e.sched.Held(domain.PartitionRef{Topic: "orders", TopicID: id, Partition: 0})); n != 1 {
		t.Fatalf("schedule holds %d records, want 1", n)
	}
}

// BenchmarkAccept is one single keyless produce of 256 bytes over the
// fakes: into the WAL (another node owns the partitions), or committed
// straight into the owned partition's log. The fakes do no I/O, so this
// is the use case's own CPU and allocations; what the owned path saves on
// a node (a WAL fsync, a WAL read, a dispatcher hand-off) is in
// docs/performance.md.
func BenchmarkAccept(b *testing.B) {
	for _, bc := range []struct{ name, owner string }{{"path=wal", "n2"}, {"path=owned", self}} {
		b.Run(bc.name, func(b *testing.B) {
			_, svc, _ := ownedEnv(b, bc.owner, 6, true)
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

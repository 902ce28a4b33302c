package produce_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/narad/narad/application/produce"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a produce with a delay or a deliver-at is accepted with its
// deliver-at in the WAL record, that one in the past (or now) is an
// ordinary produce, and that the refusals name the field (issue 19:
// per-message delay, single produce).
func TestAcceptCarriesTheDeliverAt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 3)
	now := e.clock.Now().UnixMilli()
	for _, r := range []produce.Request{
		{Topic: "t", Payload: []byte("a"), DelayMs: ms(90_000)},
		{Topic: "t", Payload: []byte("b"), DeliverAtMs: ms(now + 5_000)},
		{Topic: "t", Payload: []byte("c"), DeliverAtMs: ms(now)},
		{Topic: "t", Payload: []byte("d")},
	} {
		if err := e.svc.Accept(context.Background(), r); err != nil {
			t.Fatalf("accept %s: %v", r.Payload, err)
		}
	}
	want := []int64{now + 90_000, now + 5_000, 0, 0}
	for i, ent := range e.walRecords(t) {
		if ent.Record.DeliverAtMs != want[i] {
			t.Fatalf("record %d deliver-at %d, want %d", i, ent.Record.DeliverAtMs, want[i])
		}
	}
	for name, r := range map[string]produce.Request{
		"both":     {Topic: "t", Payload: []byte("x"), DelayMs: ms(0), DeliverAtMs: ms(now + 1)},
		"negative": {Topic: "t", Payload: []byte("x"), DelayMs: ms(-1)},
		"past max": {Topic: "t", Payload: []byte("x"), DeliverAtMs: ms(produce.DeliverAtMaxMs + 1)},
	} {
		if err := e.svc.Accept(context.Background(), r); !errors.Is(err, domain.ErrInvalidArgument) {
			t.Fatalf("%s: %v, want invalid argument", name, err)
		}
	}
}

// Ensure that the topic's retention is the only horizon: a delay within it
// is accepted, one beyond it refused, in a batch with the message's index.
func TestScheduleHorizonIsTheRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.propose(t, &meta.CreateTopic{Name: "short", ID: topicID(7), Partitions: 3, VisibilityTimeoutMs: 30_000, RetentionMs: 3_600_000})
	ok := []produce.Message{{Payload: []byte("a"), DelayMs: ms(3_600_000)}, {Payload: []byte("b")}}
	if err := e.svc.AcceptBatch(context.Background(), "short", ok); err != nil {
		t.Fatalf("a delay of exactly the retention: %v", err)
	}
	far := []produce.Message{{Payload: []byte("a")}, {Payload: []byte("b"), DelayMs: ms(3_600_001)}}
	var me *produce.MessageError
	if err := e.svc.AcceptBatch(context.Background(), "short", far); !errors.As(err, &me) || me.Index != 1 || !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("a delay past the retention: %v", err)
	}
	pin := int32(9)
	both := []produce.Message{{Payload: []byte("a"), DelayMs: ms(7_200_000)}, {Payload: []byte("b"), Partition: &pin}}
	if err := e.svc.AcceptBatch(context.Background(), "short", both); !errors.As(err, &me) || me.Index != 0 {
		t.Fatalf("the first failing message does not decide: %v", err)
	}
	badFormat := []produce.Message{{Payload: []byte("a"), Partition: &pin}, {Payload: []byte("b"), DelayMs: ms(-1)}}
	if err := e.svc.AcceptBatch(context.Background(), "short", badFormat); !errors.As(err, &me) || me.Index != 1 {
		t.Fatalf("a malformed schedule is not refused in the format pass: %v", err)
	}
	if n := len(e.walRecords(t)); n != 2 {
		t.Fatalf("the refused batch stored something: %d records", n)
	}
}

// Ensure that the owner commits the due records of a batch and keeps the
// scheduled ones in the partition's schedule, never in the log.
func TestCommitterSchedulesLaterRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self)
	now := e.clock.Now().UnixMilli()
	req := commitReq("t", id, 0, "now", "later", "past")
	req.Records[1].DeliverAtMs = now + 1_000
	req.Records[2].DeliverAtMs = now - 1
	if _, err := e.committer.CommitBatch(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	recs := e.records(t, "t", id, 0)
	if len(recs) != 2 || string(recs[0].Payload) != "now" || string(recs[1].Payload) != "past" {
		t.Fatalf("log holds %+v", recs)
	}
	ref := domain.PartitionRef{Topic: "t", TopicID: id, Partition: 0}
	if held := e.sched.Held(ref); len(held) != 1 || string(held[0].Payload) != "later" || held[0].DeliverAtMs != now+1_000 {
		t.Fatalf("schedule holds %+v", held)
	}
	if e.metrics.Count("produced t/0") != 2 || e.metrics.Count("scheduled t/0") != 1 {
		t.Fatal("produced and scheduled counts wrong")
	}
	e.sched.FailNext(errors.New("disk full"))
	if _, err := e.committer.CommitBatch(context.Background(), req); err == nil {
		t.Fatal("a failed schedule was acknowledged")
	}
}

// releaser builds a Releaser over env's fakes.
func (e *env) releaser() *produce.Releaser {
	return produce.NewReleaser(produce.ReleaserDeps{Store: e.store, Schedule: e.sched, Latch: e.latch, Clock: e.clock,
		Metrics: e.metrics, Self: self, Logger: slog.New(slog.DiscardHandler)})
}

// Ensure that a release pass moves nothing before its time, moves what is
// due on owned partitions only, and answers the next release time.
func TestReleaserPassReleasesWhatIsDue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.createTopic(t, "t", 1, 3)
	e.assign(t, "t", self, 0)
	e.assign(t, "t", "n2", 1)
	now := e.clock.Now().UnixMilli()
	mine := domain.PartitionRef{Topic: "t", TopicID: id, Partition: 0}
	theirs := domain.PartitionRef{Topic: "t", TopicID: id, Partition: 1}
	for _, ref := range []domain.PartitionRef{mine, theirs} {
		recs := []domain.Record{{Payload: []byte("x"), DeliverAtMs: now + 1_000}, {Payload: []byte("y"), DeliverAtMs: now + 2_000}}
		if err := e.sched.Schedule(context.Background(), ref, recs); err != nil {
			t.Fatal(err)
		}
	}
	if !e.latch.Ready(context.Background()) {
		t.Fatal("latch not ready")
	}
	r := e.releaser()
	next, ok := r.Pass(context.Background())
	if !ok || next.UnixMilli() != now+1_000 || len(e.records(t, "t", id, 0)) != 0 {
		t.Fatalf("early pass: next %v %v, log %d", next, ok, len(e.records(t, "t", id, 0)))
	}
	e.clock.Advance(1500 * time.Millisecond)
	r.Pass(context.Background())
	if recs := e.records(t, "t", id, 0); len(recs) != 1 || string(recs[0].Payload) != "x" {
		t.Fatalf("after 1.5 s the log holds %+v", recs)
	}
	if len(e.records(t, "t", id, 1)) != 0 || len(e.sched.Held(theirs)) != 2 {
		t.Fatal("a partition another node owns was released")
	}
	if e.metrics.Count("released t/0") != 1 || e.metrics.Count("produced t/0") != 1 {
		t.Fatal("release not counted")
	}
	e.sched.FailNext(errors.New("frozen"))
	e.clock.Advance(time.Second)
	if next, _ := r.Pass(context.Background()); next.Sub(e.clock.Now()) != time.Second {
		t.Fatalf("a failed release retries at %v, want in 1 s", next)
	}
	r.Pass(context.Background())
	if len(e.records(t, "t", id, 0)) != 1 {
		t.Fatal("a failed partition was retried before its delay")
	}
	e.clock.Advance(time.Second)
	r.Pass(context.Background())
	if _, ok := r.Pass(context.Background()); ok || len(e.records(t, "t", id, 0)) != 2 {
		t.Fatalf("after the retry delay: log %d, still scheduled %v", len(e.records(t, "t", id, 0)), ok)
	}
}

// ms is a pointer to n, for a message's optional schedule fields.
func ms(n int64) *int64 { return &n }

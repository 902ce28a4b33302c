package topics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/deadletter"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a redrive job starts running with the defaults (rate 100,
// no cap, each letter to its origin) and a fresh id, is read back with the
// topic and on its own, and that a second start while it runs is a
// conflict naming the running job.
func TestStartRedrive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	ctx := context.Background()
	j, err := f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq"})
	if err != nil {
		t.Fatal(err)
	}
	want := meta.Redrive{ID: j.ID, RatePerSec: deadletter.RedriveRatePerSecDefault, State: deadletter.RedriveRunning,
		StartedAtMs: startTime.UnixMilli(), UpdatedAtMs: startTime.UnixMilli()}
	if !idPattern.MatchString(j.ID) || j != want {
		t.Fatalf("started %+v, want %+v", j, want)
	}
	if got, err := f.svc.Redrive(anyone, "jobs-dlq"); err != nil || got != want {
		t.Fatalf("read back %+v %v", got, err)
	}
	if tp, _, _ := f.store.Topic("jobs-dlq"); tp.Redrive == nil || *tp.Redrive != want {
		t.Fatalf("topic record %+v", tp.Redrive)
	}
	_, err = f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq"})
	wantRefusal(t, err, domain.ErrConflict, `topic "jobs-dlq" already runs redrive `+j.ID+"; cancel it first")
}

// Ensure that the request's fields are checked with messages naming them:
// a rate past the bound or negative, a negative cap, an empty or invalid
// target, the topic itself, a target that does not exist; a topic that
// does not exist is 404; nothing is proposed for any of them.
func TestStartRedriveRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	cases := []struct {
		name string
		r    topics.RedriveRequest
		err  error
		msg  string
	}{
		{"rate_high", topics.RedriveRequest{RatePerSec: ptr(int64(100_001))}, domain.ErrInvalidArgument, "invalid argument: rate_per_sec must be from 0 to 100000"},
		{"rate_negative", topics.RedriveRequest{RatePerSec: ptr(int64(-1))}, domain.ErrInvalidArgument, "invalid argument: rate_per_sec must be from 0 to 100000"},
		{"max_negative", topics.RedriveRequest{MaxMessages: ptr(int64(-5))}, domain.ErrInvalidArgument, "invalid argument: max_messages must be 0 (all) or more"},
		{"to_empty", topics.RedriveRequest{To: ptr("")}, domain.ErrInvalidArgument, "invalid argument: to must name a topic; leave it out to send each letter to its origin"},
		{"to_itself", topics.RedriveRequest{To: ptr("jobs-dlq")}, domain.ErrInvalidArgument, "invalid argument: to names the dead-letter topic itself"},
		{"to_bad_name", topics.RedriveRequest{To: ptr("bad name")}, domain.ErrInvalidArgument, `invalid argument: to: topic name "bad name": character ' ' not in A-Z a-z 0-9 . _ -`},
		{"to_missing", topics.RedriveRequest{To: ptr("nowhere")}, domain.ErrInvalidArgument, "invalid argument: to names no topic: nowhere"},
		{"no_topic", topics.RedriveRequest{Name: "ghost"}, domain.ErrTopicNotFound, ""},
	}
	for _, tc := range cases {
		tc.r.Caller = anyone
		if tc.r.Name == "" {
			tc.r.Name = "jobs-dlq"
		}
		_, err := f.svc.StartRedrive(context.Background(), tc.r)
		if tc.msg == "" {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
			}
			continue
		}
		var r *domain.Refusal
		if !errors.As(err, &r) || !errors.Is(err, tc.err) || r.Detail != tc.msg {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
	if tp, _, _ := f.store.Topic("jobs-dlq"); tp.Redrive != nil {
		t.Fatalf("a refused start left a job: %+v", tp.Redrive)
	}
}

// Ensure that only the topic's owner or an admin starts or cancels a job,
// that a target needs the caller's produce grant, that any grant on the
// topic reads it, and that the job records who started it.
func TestRedriveAccess(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: creator, Name: "orders-dlq"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "retry"})
	ctx := context.Background()
	_, err := f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: producer, Name: "orders-dlq"})
	wantDenied(t, err, "only the topic owner or an admin may modify this topic")
	_, err = f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: creator, Name: "orders-dlq", To: ptr("retry")})
	wantDenied(t, err, "produce not allowed on this topic")
	j, err := f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: creator, Name: "orders-dlq"})
	if err != nil || j.By != "kim" {
		t.Fatalf("the owner's start: %+v %v", j, err)
	}
	if _, err := f.svc.Redrive(producer, "orders-dlq"); err != nil {
		t.Fatalf("a produce grant on the topic reads its job: %v", err)
	}
	_, err = f.svc.Redrive(user("eve"), "orders-dlq")
	wantDenied(t, err, "no grant on this topic")
	_, err = f.svc.CancelRedrive(ctx, producer, "orders-dlq")
	wantDenied(t, err, "only the topic owner or an admin may modify this topic")
	if got, err := f.svc.CancelRedrive(ctx, ops, "orders-dlq"); err != nil || got.State != deadletter.RedriveCancelled {
		t.Fatalf("an admin's cancel: %+v %v", got, err)
	}
	j, err = f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: ops, Name: "orders-dlq", To: ptr("retry")})
	if err != nil || j.By != "ops" || j.To != "retry" {
		t.Fatalf("an admin's start with a target: %+v %v", j, err)
	}
}

// Ensure that a cancel ends the running job as cancelled and keeps its
// counts, that a topic with no running job answers 409 to a cancel and a
// topic that never had one 404 to a read, and that a new job may start
// after the cancel.
func TestCancelRedrive(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	ctx := context.Background()
	_, err := f.svc.Redrive(anyone, "jobs-dlq")
	if !errors.Is(err, domain.ErrNoRedrive) {
		t.Fatalf("no job yet: %v", err)
	}
	_, err = f.svc.CancelRedrive(ctx, anyone, "jobs-dlq")
	wantRefusal(t, err, domain.ErrConflict, `topic "jobs-dlq" runs no redrive job`)
	j, err := f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq", MaxMessages: ptr(int64(10))})
	if err != nil {
		t.Fatal(err)
	}
	tp, _, _ := f.store.Topic("jobs-dlq")
	progress := j
	progress.Moved, progress.Skipped = 4, 1
	f.propose(t, &meta.SetTopicRedrive{Name: "jobs-dlq", ID: tp.ID, Job: j.ID, Redrive: progress})
	got, err := f.svc.CancelRedrive(ctx, anyone, "jobs-dlq")
	if err != nil || got.State != deadletter.RedriveCancelled || got.Moved != 4 || got.Skipped != 1 || got.MaxMessages != 10 {
		t.Fatalf("cancel: %+v %v", got, err)
	}
	if back, _ := f.svc.Redrive(anyone, "jobs-dlq"); back != got {
		t.Fatalf("read back %+v, want %+v", back, got)
	}
	_, err = f.svc.CancelRedrive(ctx, anyone, "jobs-dlq")
	wantRefusal(t, err, domain.ErrConflict, `topic "jobs-dlq" runs no redrive job`)
	if _, err := f.svc.StartRedrive(ctx, topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq"}); err != nil {
		t.Fatalf("a start after a cancel: %v", err)
	}
}

// Ensure that while a member runs a release without entry type 40 no job
// is started (412, naming the member).
func TestRedriveReleaseGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2")
	f.propose(t, &meta.MemberHeartbeat{ID: "n2", EntryTypes: meta.TypeSetTopicDeadLetter})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	_, err := f.svc.StartRedrive(context.Background(), topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq"})
	wantRefusal(t, err, domain.ErrPrecondition, `n2 runs an older release that cannot store a redrive job (member "n2" (applies through type 39)); upgrade every member first`)
	f.propose(t, &meta.MemberHeartbeat{ID: "n2", EntryTypes: meta.AppliesThroughType})
	if _, err := f.svc.StartRedrive(context.Background(), topics.RedriveRequest{Caller: anyone, Name: "jobs-dlq"}); err != nil {
		t.Fatalf("the gate still held after n2 upgraded: %v", err)
	}
}

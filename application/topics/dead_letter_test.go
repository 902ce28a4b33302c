package topics_test

import (
	"context"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// dlq is a dead-letter policy request to topic to after max receives.
func dlq(to string, max int64) *topics.DeadLetterRequest {
	return &topics.DeadLetterRequest{Topic: &to, MaxReceiveCount: &max}
}

// Ensure that a create may carry a dead-letter policy naming an existing
// topic, alone or with a redelivery backoff, and that a create without one
// has none.
func TestCreateWithDeadLetter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	got := f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs", DeadLetter: dlq("jobs-dlq", 5)})
	if want := (meta.DeadLetter{Topic: "jobs-dlq", MaxReceiveCount: 5}); got.DeadLetter == nil || *got.DeadLetter != want {
		t.Fatalf("create: dead_letter %+v, want %+v", got.DeadLetter, want)
	}
	both := f.create(t, topics.CreateRequest{Caller: anyone, Name: "both", DeadLetter: dlq("jobs-dlq", 1000),
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(1000))}})
	if both.DeadLetter == nil || both.DeadLetter.MaxReceiveCount != 1000 || both.Redelivery == nil || both.Redelivery.InitialMs != 1000 {
		t.Fatalf("create with both policies: %+v %+v", both.DeadLetter, both.Redelivery)
	}
	if plain := f.create(t, topics.CreateRequest{Caller: anyone, Name: "plain"}); plain.DeadLetter != nil {
		t.Fatalf("no policy asked: %+v", plain.DeadLetter)
	}
}

// Ensure that an alter sets, replaces and clears the policy, keeps the rest
// of the topic, and that other alters keep the policy.
func TestAlterDeadLetter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "dlq-a"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "dlq-b"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs", MaxInFlight: 5})
	got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", DeadLetter: dlq("dlq-a", 3)})
	if d := got.DeadLetter; d == nil || *d != (meta.DeadLetter{Topic: "dlq-a", MaxReceiveCount: 3}) || got.MaxInFlight != 5 {
		t.Fatalf("set: %+v %+v", got, d)
	}
	got = f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", DeadLetter: dlq("dlq-b", 1),
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(50))}})
	if d := got.DeadLetter; d == nil || *d != (meta.DeadLetter{Topic: "dlq-b", MaxReceiveCount: 1}) || got.Redelivery == nil {
		t.Fatalf("replace with a redelivery backoff: %+v %+v", d, got.Redelivery)
	}
	got = f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", RetentionMs: ptr(int64(0)), ClearRedelivery: true})
	if got.DeadLetter == nil || got.DeadLetter.Topic != "dlq-b" || got.Redelivery != nil {
		t.Fatalf("an alter of retention and redelivery keeps the policy: %+v", got.DeadLetter)
	}
	if got = f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", ClearDeadLetter: true}); got.DeadLetter != nil {
		t.Fatalf("clear: %+v", got.DeadLetter)
	}
}

// Ensure that a policy breaking a rule is refused with a message naming
// the field, before anything is applied.
func TestDeadLetterRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	cases := []struct {
		name string
		r    topics.DeadLetterRequest
		msg  string
	}{
		{"no_topic", topics.DeadLetterRequest{MaxReceiveCount: ptr(int64(5))}, "invalid argument: dead_letter.topic is required"},
		{"no_count", topics.DeadLetterRequest{Topic: ptr("jobs-dlq")}, "invalid argument: dead_letter.max_receive_count is required"},
		{"count_zero", *dlq("jobs-dlq", 0), "invalid argument: dead_letter.max_receive_count must be from 1 to 1000"},
		{"count_high", *dlq("jobs-dlq", 1001), "invalid argument: dead_letter.max_receive_count must be from 1 to 1000"},
		{"count_negative", *dlq("jobs-dlq", -1), "invalid argument: dead_letter.max_receive_count must be from 1 to 1000"},
		{"count_past_uint32", *dlq("jobs-dlq", 1<<32+5), "invalid argument: dead_letter.max_receive_count must be from 1 to 1000"},
		{"empty_topic", *dlq("", 5), "invalid argument: dead_letter.topic: topic name is empty"},
		{"bad_topic", *dlq("bad name", 5), `invalid argument: dead_letter.topic: topic name "bad name": character ' ' not in A-Z a-z 0-9 . _ -`},
		{"no_such_topic", *dlq("nowhere", 5), "invalid argument: dead_letter.topic names no topic: nowhere"},
	}
	for _, c := range cases {
		_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "jobs", RetentionMs: ptr(int64(0)), DeadLetter: &c.r})
		wantRefusal(t, err, domain.ErrInvalidArgument, c.msg)
		_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "new-" + c.name, DeadLetter: &c.r})
		wantRefusal(t, err, domain.ErrInvalidArgument, c.msg)
		if _, ok, _ := f.store.Topic("new-" + c.name); ok {
			t.Fatalf("%s: a refused create made the topic", c.name)
		}
	}
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "jobs", DeadLetter: dlq("jobs", 5)})
	wantRefusal(t, err, domain.ErrInvalidArgument, `invalid argument: dead_letter.topic must name another topic than "jobs"`)
	_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "self", DeadLetter: dlq("self", 5)})
	wantRefusal(t, err, domain.ErrInvalidArgument, `invalid argument: dead_letter.topic must name another topic than "self"`)
	if got := f.describe(t, "jobs").Topic; got.RetentionMs == 0 || got.DeadLetter != nil {
		t.Fatalf("a refused policy left the alter's other groups applied: %+v", got)
	}
	_, err = f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "jobs",
		DeadLetter: dlq("jobs-dlq", 5), ClearDeadLetter: true})
	wantRefusal(t, err, domain.ErrInvalidArgument, "dead_letter: set a policy or clear it (null), not both")
}

// Ensure that while a member runs a release without entry type 39 (even
// one with 38) no policy is proposed (412, naming the member), not even
// with a create, which then creates nothing.
func TestDeadLetterReleaseGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2")
	f.propose(t, &meta.MemberHeartbeat{ID: "n2", EntryTypes: meta.TypeSetTopicRedelivery})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs-dlq"})
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "jobs", DeadLetter: dlq("jobs-dlq", 5)})
	wantRefusal(t, err, domain.ErrPrecondition, `n2 runs an older release that cannot store a dead-letter policy (member "n2" (applies through type 38)); upgrade every member first`)
	if _, ok, _ := f.store.Topic("jobs"); ok {
		t.Fatal("a create held back by the gate created the topic")
	}
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "plain"})
	_, err = f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "plain", ClearDeadLetter: true})
	wantRefusal(t, err, domain.ErrPrecondition, "")
	f.propose(t, &meta.MemberHeartbeat{ID: "n2", EntryTypes: meta.AppliesThroughType})
	got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "plain", DeadLetter: dlq("jobs-dlq", 5)})
	if got.DeadLetter == nil {
		t.Fatal("the gate still held the policy after n2 upgraded")
	}
}

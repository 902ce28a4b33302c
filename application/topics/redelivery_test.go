package topics_test

import (
	"context"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a create may carry a redelivery backoff, that its defaults
// fill in what the request leaves out, and that a create without one has
// none.
func TestCreateWithRedelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got := f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs",
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(1000))}})
	want := meta.Redelivery{InitialMs: 1000, Multiplier: 2, MaxMs: 600_000, Jitter: 0}
	if got.Redelivery == nil || *got.Redelivery != want {
		t.Fatalf("create: redelivery %+v, want %+v", got.Redelivery, want)
	}
	long := f.create(t, topics.CreateRequest{Caller: anyone, Name: "slow",
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(3_600_000)), Multiplier: ptr(1.5), Jitter: ptr(0.5)}})
	if r := long.Redelivery; r == nil || r.MaxMs != 3_600_000 || r.Multiplier != 1.5 || r.Jitter != 0.5 {
		t.Fatalf("max_ms defaults to initial_ms when that is longer: %+v", r)
	}
	if plain := f.create(t, topics.CreateRequest{Caller: anyone, Name: "plain"}); plain.Redelivery != nil {
		t.Fatalf("no policy asked: %+v", plain.Redelivery)
	}
}

// Ensure that an alter sets, replaces and clears the policy and keeps the
// rest of the topic.
func TestAlterRedelivery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs", MaxInFlight: 5})
	got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs",
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(500)), Multiplier: ptr(3.0), MaxMs: ptr(int64(9000)), Jitter: ptr(0.1)}})
	if r := got.Redelivery; r == nil || *r != (meta.Redelivery{InitialMs: 500, Multiplier: 3, MaxMs: 9000, Jitter: 0.1}) || got.MaxInFlight != 5 {
		t.Fatalf("set: %+v %+v", got, r)
	}
	got = f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", RetentionMs: ptr(int64(0))})
	if got.Redelivery == nil || got.Redelivery.InitialMs != 500 {
		t.Fatalf("an alter of retention keeps the policy: %+v", got.Redelivery)
	}
	if got = f.alter(t, topics.AlterRequest{Caller: anyone, Name: "jobs", ClearRedelivery: true}); got.Redelivery != nil {
		t.Fatalf("clear: %+v", got.Redelivery)
	}
}

// Ensure that a policy out of range is refused with a message naming the
// field and its range, before anything is applied.
func TestRedeliveryRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "jobs"})
	cases := []struct {
		name string
		r    topics.RedeliveryRequest
		msg  string
	}{
		{"no_initial", topics.RedeliveryRequest{MaxMs: ptr(int64(10))}, "invalid argument: redelivery.initial_ms is required"},
		{"initial_zero", topics.RedeliveryRequest{InitialMs: ptr(int64(0))}, "invalid argument: redelivery.initial_ms must be from 1 to 43200000 (milliseconds)"},
		{"initial_long", topics.RedeliveryRequest{InitialMs: ptr(int64(43_200_001))}, "invalid argument: redelivery.initial_ms must be from 1 to 43200000 (milliseconds)"},
		{"max_below", topics.RedeliveryRequest{InitialMs: ptr(int64(100)), MaxMs: ptr(int64(99))}, "invalid argument: redelivery.max_ms must be from initial_ms (100) to 43200000 (milliseconds)"},
		{"multiplier", topics.RedeliveryRequest{InitialMs: ptr(int64(100)), Multiplier: ptr(0.9)}, "invalid argument: redelivery.multiplier must be from 1 to 10"},
		{"multiplier_high", topics.RedeliveryRequest{InitialMs: ptr(int64(100)), Multiplier: ptr(10.5)}, "invalid argument: redelivery.multiplier must be from 1 to 10"},
		{"jitter", topics.RedeliveryRequest{InitialMs: ptr(int64(100)), Jitter: ptr(-0.1)}, "invalid argument: redelivery.jitter must be from 0 to 1 (a fraction of the wait)"},
	}
	for _, c := range cases {
		_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "jobs", RetentionMs: ptr(int64(0)), Redelivery: &c.r})
		wantRefusal(t, err, domain.ErrInvalidArgument, c.msg)
		_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "new-" + c.name, Redelivery: &c.r})
		wantRefusal(t, err, domain.ErrInvalidArgument, c.msg)
	}
	if got := f.describe(t, "jobs").Topic; got.RetentionMs == 0 {
		t.Fatal("a refused policy left the alter's other groups applied")
	}
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "jobs",
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(1))}, ClearRedelivery: true})
	wantRefusal(t, err, domain.ErrInvalidArgument, "redelivery: set a policy or clear it (null), not both")
}

// Ensure that while a member runs a release without entry type 38 no
// policy is proposed (412, naming the member), not even with a create,
// which then creates nothing.
func TestRedeliveryReleaseGate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, self, "n2") // n2 reports no entry types: a v3.0.x node
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "jobs",
		Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(1000))}})
	wantRefusal(t, err, domain.ErrPrecondition, `n2 runs an older release that cannot store a redelivery policy (member "n2" (applies through type 22)); upgrade every member first`)
	if _, ok, _ := f.store.Topic("jobs"); ok {
		t.Fatal("a create held back by the gate created the topic")
	}
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "plain"})
	_, err = f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "plain", ClearRedelivery: true})
	wantRefusal(t, err, domain.ErrPrecondition, "")
	f.propose(t, &meta.MemberHeartbeat{ID: "n2", EntryTypes: meta.AppliesThroughType})
	got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "plain", Redelivery: &topics.RedeliveryRequest{InitialMs: ptr(int64(1000))}})
	if got.Redelivery == nil {
		t.Fatal("the gate still held the policy after n2 upgraded")
	}
}

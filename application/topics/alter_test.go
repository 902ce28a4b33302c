package topics_test

import (
	"context"
	"errors"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

func (f *fixture) alter(t *testing.T, req topics.AlterRequest) meta.Topic {
	t.Helper()
	got, err := f.svc.Alter(context.Background(), req)
	if err != nil {
		t.Fatalf("alter %+v: %v", req, err)
	}
	return got.Topic
}

// Ensure that retention, caps and partitions change as asked (conformance
// 52, 54, 55, 174) and keep what the request left out.
func TestAlterConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t", MaxInFlight: 5})
	if got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(7_200_000))}); got.RetentionMs != 7_200_000 || got.MaxInFlight != 5 {
		t.Fatalf("retention: %+v", got)
	}
	if got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(0))}); got.RetentionMs != 0 {
		t.Fatalf("keep forever: %+v", got)
	}
	if got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", MaxInFlight: ptr(int64(0))}); got.MaxInFlight != 1024 {
		t.Fatalf("cap back to default: %+v", got)
	}
	got := f.alter(t, topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(6)), MaxAckedAhead: ptr(int64(7))})
	if got.Partitions != 6 || got.MaxAckedAhead != 7 || got.VisibilityTimeoutMs != 30_000 {
		t.Fatalf("grow: %+v", got)
	}
	if d := f.describe(t, "t"); len(d.Stats) != 6 || d.Partial {
		t.Fatalf("describe after grow: %+v", d)
	}
}

// Ensure that alter refusals carry the spec's messages (conformance 53,
// 56, 57).
func TestAlterRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t", Partitions: 4})
	cases := []struct {
		name string
		req  topics.AlterRequest
		err  error
		msg  string
	}{
		{"nothing", topics.AlterRequest{Caller: anyone, Name: "t"}, domain.ErrInvalidArgument, "at least one of partitions, retention_ms, max_*_per_partition, or schema is required"},
		{"same_partitions", topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(4))}, domain.ErrInvalidArgument, "invalid argument: new partition count (4) must be greater than current (4); decrease is not supported"},
		{"shrink", topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(3))}, domain.ErrInvalidArgument, ""},
		{"above_max", topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(109))}, domain.ErrInvalidArgument, "invalid argument: partitions (109) exceeds topic.max_partitions (108)"},
		{"negative_partitions", topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(-1))}, domain.ErrInvalidArgument, "partitions must be > 0"},
		{"negative_retention", topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(-100))}, domain.ErrInvalidArgument, ""},
		{"retention_floor", topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(1_800_000))}, domain.ErrInvalidArgument, "invalid argument: retention_ms (1800000) is below the minimum of 3600000 (1 hour)"},
		{"negative_cap", topics.AlterRequest{Caller: anyone, Name: "t", MaxAckedAhead: ptr(int64(-1))}, domain.ErrInvalidArgument, "max_acked_ahead_per_partition must be >= 0 (0 = use default)"},
		{"null_schema", topics.AlterRequest{Caller: anyone, Name: "t", Schema: []byte("null")}, domain.ErrInvalidArgument, ""},
		{"missing", topics.AlterRequest{Caller: anyone, Name: "missing", RetentionMs: ptr(int64(0))}, domain.ErrTopicNotFound, ""},
	}
	for _, tc := range cases {
		_, err := f.svc.Alter(context.Background(), tc.req)
		t.Run(tc.name, func(t *testing.T) { wantRefusal(t, err, tc.err, tc.msg) })
	}
	if got, _, _ := f.store.Topic("t"); got.Partitions != 4 || got.RetentionMs != 604_800_000 {
		t.Fatalf("refusals changed the topic: %+v", got)
	}
}

// Ensure that groups apply in order and are not atomic: a valid retention
// stays applied when the partitions group fails (conformance 62), and a
// failing schema group keeps the config groups (conformance 61 shape).
func TestAlterGroupsNotAtomic(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "t", Partitions: 4})
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(7_200_000)), Partitions: ptr(int64(2))})
	wantRefusal(t, err, domain.ErrInvalidArgument, "")
	if got, _, _ := f.store.Topic("t"); got.RetentionMs != 7_200_000 {
		t.Fatalf("retention not applied before the failing group: %+v", got)
	}
	_, err = f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "t", Partitions: ptr(int64(8)), Schema: []byte(`{"type":"fake-refuse"}`)})
	wantRefusal(t, err, domain.ErrInvalidArgument, "")
	if got, _, _ := f.store.Topic("t"); got.Partitions != 8 {
		t.Fatalf("partitions not applied before the failing schema: %+v", got)
	}
}

// racingStore recreates the topic (a new incarnation) right before each of
// the first `races` proposals of a compare-and-set entry, as another node
// would.
type racingStore struct {
	*fake.MetaStore
	races int
	n     int
}

func (r *racingStore) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	name := ""
	switch ev := env.Event.(type) {
	case *meta.UpdateTopicIf:
		name = ev.Name
	case *meta.DeleteTopicIf:
		name = ev.Name
	case *meta.PutSchemaIf:
		name = ev.Topic
	}
	if name != "" && r.races > 0 {
		r.races--
		r.n++
		id := []byte("00000000000000a0")
		id[15] = byte('0' + r.n)
		if _, err := r.Commit(meta.Envelope{Event: &meta.DeleteTopic{Name: name}}); err != nil {
			return ports.MetaApplied{}, err
		}
		if _, err := r.Commit(meta.Envelope{Event: &meta.CreateTopic{Name: name, ID: string(id), Partitions: 3, VisibilityTimeoutMs: 30_000}}); err != nil {
			return ports.MetaApplied{}, err
		}
	}
	return r.MetaStore.Propose(ctx, env)
}

// Ensure that a compare-and-set that loses to a recreate re-reads and
// retries once, and that losing twice answers "topic changed since it was
// read" (internals.md §8.2; api.md §2.8, §2.9).
func TestCompareAndSetRetriesOnce(t *testing.T) {
	t.Parallel()
	for _, races := range []int{1, 2} {
		f := newFixture(t)
		racing := &racingStore{MetaStore: f.meta, races: races}
		f.store = racing
		f.build(t)
		f.create(t, topics.CreateRequest{Caller: anyone, Name: "t"})
		_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "t", RetentionMs: ptr(int64(0))})
		if races == 1 && err != nil {
			t.Fatalf("one race: %v", err)
		}
		if races == 2 && !errors.Is(err, domain.ErrTopicChanged) {
			t.Fatalf("two races: %v", err)
		}
		racing.races = races
		_, err = f.svc.Delete(context.Background(), anyone, "t")
		if races == 1 && err != nil {
			t.Fatalf("delete, one race: %v", err)
		}
		if races == 2 && !errors.Is(err, domain.ErrTopicChanged) {
			t.Fatalf("delete, two races: %v", err)
		}
	}
}

// Conformance 252: an alter of a remote child's stub is a 409.
func TestAlterRefusesARemoteStub(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.propose(t, &meta.PutRemote{Name: "dr", ID: "00000000000000f1", URL: "https://dr.example:8443", Username: "u",
		Credential: meta.RemoteCredential{SealedPassword: []byte("x"), KeyVersion: "0000000000000001", Fingerprint: "0123456789ab"},
		Limits: meta.RemoteLimits{MaxInFlight: 1, RequestTimeoutMs: 5_000, IdleConnTimeoutMs: 1_000, ConnMaxAgeMs: 10_000,
			CheckIntervalMs: 10_000, Compression: "none"}, Salt: make([]byte, 32)})
	f.propose(t, &meta.AttachRemoteChild{Parent: "p", ParentID: p.ID, Child: "p-dr", ChildID: "00000000000000c1",
		Epoch: "00000000000000e9", Remote: "dr", RemoteID: "00000000000000f1", RemoteTopic: "p", From: meta.RemoteFromAttach, Lanes: 1})
	_, err := f.svc.Alter(context.Background(), topics.AlterRequest{Caller: anyone, Name: "p-dr", RetentionMs: ptr(int64(7_200_000))})
	if !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("alter of a stub: %v, want a conflict", err)
	}
}

package topics_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// Ensure that a create without options takes the server defaults, a fresh
// 16-hex id and the proposer's clock as created_at (conformance 18, 169).
func TestCreateDefaults(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	got := f.create(t, topics.CreateRequest{Caller: anyone, Name: "defaults"})
	want := meta.Topic{Name: "defaults", ID: got.ID, Partitions: 3, RetentionMs: 604_800_000, VisibilityTimeoutMs: 30_000,
		MaxInFlight: 1024, MaxAckedAhead: 1024, CreatedAt: startTime.Unix()}
	if !idPattern.MatchString(got.ID) || got.Name != want.Name || got.Partitions != want.Partitions ||
		got.RetentionMs != want.RetentionMs || got.VisibilityTimeoutMs != want.VisibilityTimeoutMs ||
		got.MaxInFlight != want.MaxInFlight || got.MaxAckedAhead != want.MaxAckedAhead || got.CreatedAt != want.CreatedAt {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	forever := f.create(t, topics.CreateRequest{Caller: anyone, Name: "forever", RetentionMs: ptr(int64(0))})
	explicit := f.create(t, topics.CreateRequest{Caller: anyone, Name: "explicit", Partitions: 8, RetentionMs: ptr(int64(3_600_000))})
	if forever.RetentionMs != 0 || explicit.Partitions != 8 || explicit.RetentionMs != 3_600_000 {
		t.Fatalf("forever %+v explicit %+v", forever, explicit)
	}
	if forever.ID == got.ID {
		t.Fatal("two topics share an id")
	}
}

// Ensure that every field rule refuses with the spec's message and leaves no
// topic behind (conformance 21-24, 36, 37).
func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	long := strings.Repeat("a", 201)
	cases := []struct {
		name string
		req  topics.CreateRequest
		err  error
		msg  string
	}{
		{"empty_name", topics.CreateRequest{Caller: anyone}, domain.ErrInvalidArgument, "invalid argument: name required"},
		{"dot", topics.CreateRequest{Caller: anyone, Name: "."}, domain.ErrInvalidArgument, `invalid argument: topic name must not be "."`},
		{"dotdot", topics.CreateRequest{Caller: anyone, Name: ".."}, domain.ErrInvalidArgument, `invalid argument: topic name must not be ".."`},
		{"space", topics.CreateRequest{Caller: anyone, Name: "a b"}, domain.ErrInvalidTopicName, ""},
		{"slash", topics.CreateRequest{Caller: anyone, Name: "a/b"}, domain.ErrInvalidTopicName, ""},
		{"too_long", topics.CreateRequest{Caller: anyone, Name: long}, domain.ErrInvalidTopicName, "invalid argument: topic name longer than 200 characters"},
		{"negative_partitions", topics.CreateRequest{Caller: anyone, Name: "x", Partitions: -1}, domain.ErrInvalidArgument, "invalid argument: partitions must be >= 3 (0 = use default)"},
		{"one_partition", topics.CreateRequest{Caller: anyone, Name: "x", Partitions: 1}, domain.ErrInvalidArgument, "invalid argument: partitions must be >= 3 (0 = use default)"},
		{"too_many_partitions", topics.CreateRequest{Caller: anyone, Name: "x", Partitions: 109}, domain.ErrInvalidArgument, "invalid argument: partitions (109) exceeds topic.max_partitions (108)"},
		{"negative_retention", topics.CreateRequest{Caller: anyone, Name: "x", RetentionMs: ptr(int64(-1))}, domain.ErrInvalidArgument, ""},
		{"retention_floor", topics.CreateRequest{Caller: anyone, Name: "x", RetentionMs: ptr(int64(1_800_000))}, domain.ErrInvalidArgument, "invalid argument: retention_ms (1800000) is below the minimum of 3600000 (1 hour)"},
		{"negative_visibility", topics.CreateRequest{Caller: anyone, Name: "x", VisibilityMs: -1}, domain.ErrInvalidArgument, "invalid argument: visibility_timeout_ms must be >= 0 (0 = use default)"},
		{"negative_cap", topics.CreateRequest{Caller: anyone, Name: "x", MaxInFlight: -1}, domain.ErrInvalidArgument, "invalid argument: max_in_flight_per_partition must be >= 0 (0 = use default)"},
		{"delay_without_parent", topics.CreateRequest{Caller: anyone, Name: "x2", FanoutDelayMs: 1000}, domain.ErrInvalidArgument, "invalid argument: fanout_delay_ms requires parent"},
		{"own_parent", topics.CreateRequest{Caller: anyone, Name: "x3", Parent: "x3"}, domain.ErrInvalidArgument, "invalid argument: a topic cannot be its own parent"},
		{"negative_delay", topics.CreateRequest{Caller: anyone, Name: "x3", Parent: "p", FanoutDelayMs: -1}, domain.ErrInvalidArgument, "invalid argument: fanout_delay_ms must be >= 0"},
		{"delay_over_a_year", topics.CreateRequest{Caller: anyone, Name: "x3", Parent: "p", FanoutDelayMs: 31_536_000_001}, domain.ErrInvalidArgument, "invalid argument: fanout_delay_ms (31536000001) exceeds the maximum of 31536000000 (1 year)"},
		{"missing_parent", topics.CreateRequest{Caller: anyone, Name: "x4", Parent: "nope"}, domain.ErrTopicNotFound, ""},
		{"schema_refused", topics.CreateRequest{Caller: anyone, Name: "x5", Schema: []byte(`{"type":"fake-refuse"}`)}, domain.ErrInvalidArgument, "invalid argument: schema: refused by the fake"},
		{"schema_not_object", topics.CreateRequest{Caller: anyone, Name: "x6", Schema: []byte(`[1]`)}, domain.ErrInvalidArgument, ""},
	}
	for _, tc := range cases {
		_, err := f.svc.Create(context.Background(), tc.req)
		t.Run(tc.name, func(t *testing.T) { wantRefusal(t, err, tc.err, tc.msg) })
	}
	all, err := f.store.ListTopics("", 0)
	if err != nil || len(all) != 0 {
		t.Fatalf("refused creates left topics: %+v %v", all, err)
	}
	if got := f.create(t, topics.CreateRequest{Caller: anyone, Name: strings.Repeat("a", 200)}); got.Partitions != 3 {
		t.Fatalf("200-character name: %+v", got)
	}
}

// Ensure that a taken name answers "exists" and a name taken in another
// letter case names the existing topic (conformance 20, 167).
func TestCreateExistsAndCaseClash(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "orders"})
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "orders"})
	if !errors.Is(err, domain.ErrTopicExists) {
		t.Fatalf("second create: %v", err)
	}
	_, err = f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "Orders"})
	wantRefusal(t, err, domain.ErrTopicNameCase, `topic "Orders" differs only in letter case from existing topic "orders"`)
	if _, ok, _ := f.store.Topic("Orders"); ok {
		t.Fatal("the case twin was created")
	}
}

// Ensure that a create's schema becomes version 1, stored compacted
// (conformance 28, 176; api.md §2.9.1).
func TestCreateWithSchema(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "typed", Schema: []byte("{\n  \"type\": \"object\"\n}")})
	d := f.describe(t, "typed")
	if d.SchemaVersion != 1 || string(d.Schema) != `{"type":"object"}` {
		t.Fatalf("describe: v%d %s", d.SchemaVersion, d.Schema)
	}
	h, err := f.svc.SchemaHistory(context.Background(), anyone, "typed")
	if err != nil || h.Version != 1 || len(h.Versions) != 1 {
		t.Fatalf("history %+v %v", h, err)
	}
}

// Ensure that an unavailable metadata store answers 503 with the "may still
// be applied" text the SDK matches (api.md appendix B.2).
func TestCreateProposeFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.meta.FailPropose(meta.ErrUnavailable)
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "t"})
	if !errors.Is(err, domain.ErrUnavailable) || !strings.Contains(err.Error(), "the change may still be applied") {
		t.Fatalf("got %v", err)
	}
}

// Ensure that New rejects nil dependencies and impossible defaults.
func TestNewRejectsBadWiring(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if _, err := topics.New(nil, f.logs, f.schema, f.clock, strings.NewReader(""), serverDefaults, self); !errors.Is(err, topics.ErrInvalidConfig) {
		t.Fatalf("nil store: %v", err)
	}
	bad := serverDefaults
	bad.RetentionMs = 1000
	if _, err := topics.New(f.store, f.logs, f.schema, f.clock, strings.NewReader(""), bad, self); !errors.Is(err, topics.ErrInvalidConfig) {
		t.Fatalf("retention below the floor: %v", err)
	}
	if _, err := topics.New(f.store, f.logs, f.schema, f.clock, strings.NewReader(""), serverDefaults, ""); !errors.Is(err, topics.ErrInvalidConfig) {
		t.Fatalf("empty node id: %v", err)
	}
}

// Ensure that a failing random source fails the create cleanly.
func TestCreateRandomFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, strings.NewReader("short"), serverDefaults, self)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "t"}); err == nil {
		t.Fatal("create with a broken random source succeeded")
	}
}

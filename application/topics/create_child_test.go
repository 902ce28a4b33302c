package topics_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// Ensure that a create-as-child answers the attached child view: role
// child, the parent, the parent's partition count, a 16-hex epoch and one
// attach offset per parent partition, each the committed high watermark
// (conformance 33).
func TestCreateAsChildRecordsTheAttachPoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := f.create(t, topics.CreateRequest{Caller: anyone, Name: "rp"})
	f.commit(t, p, 0, 5)
	f.commit(t, p, 2, 2)
	c := f.create(t, topics.CreateRequest{Caller: anyone, Name: "rc", Parent: "rp"})
	if c.Role() != meta.RoleChild || c.Parent != "rp" || c.Partitions != 3 || !idPattern.MatchString(c.AttachEpoch) {
		t.Fatalf("child view %+v", c)
	}
	if fmt.Sprint(c.AttachOffsets) != "[5 0 2]" {
		t.Fatalf("attach offsets %v, want [5 0 2]", c.AttachOffsets)
	}
	parent, _, _ := f.store.Topic("rp")
	if parent.Role() != meta.RoleParent || fmt.Sprint(parent.Children) != "[rc]" {
		t.Fatalf("parent %+v", parent)
	}
}

// Ensure that a child's partitions default to its parent's count, an
// explicit count wins, and a delay is recorded.
func TestCreateAsChildPartitionsAndDelay(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p6", Partitions: 6})
	if c := f.create(t, topics.CreateRequest{Caller: anyone, Name: "c6", Parent: "p6"}); c.Partitions != 6 || len(c.AttachOffsets) != 6 {
		t.Fatalf("default partitions: %+v", c)
	}
	if c := f.create(t, topics.CreateRequest{Caller: anyone, Name: "c4", Parent: "p6", Partitions: 4, FanoutDelayMs: 1500}); c.Partitions != 4 || c.FanoutDelayMs != 1500 {
		t.Fatalf("explicit partitions and delay: %+v", c)
	}
}

// Ensure that the link rules answer 409 with the spec's words and leave no
// half-created child behind (conformance 37, 73; api.md §2.5, §2.10).
func TestCreateAsChildRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "c", Parent: "p"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "short", RetentionMs: ptr(int64(7_200_000))})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "plain"})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "typed", Schema: []byte(`{"type":"object","required":["a"]}`)})
	for _, tc := range []struct {
		name   string
		req    topics.CreateRequest
		prefix string
	}{
		{"under_a_child", topics.CreateRequest{Caller: anyone, Name: "g", Parent: "c"}, "fan-out role conflict: "},
		{"delay_over_retention", topics.CreateRequest{Caller: anyone, Name: "d", Parent: "short", FanoutDelayMs: 3_600_001}, "delay exceeds what the parent's retention can buffer"},
		{"schema_under_schemaless", topics.CreateRequest{Caller: anyone, Name: "s1", Parent: "plain", Schema: []byte(`{"type":"object"}`)}, "child schema incompatible with parent: "},
		{"different_schema", topics.CreateRequest{Caller: anyone, Name: "s2", Parent: "typed", Schema: []byte(`{"type":"object"}`)}, "child schema incompatible with parent: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Create(context.Background(), tc.req)
			var r *domain.Refusal
			if !errors.Is(err, domain.ErrConflict) || !errors.As(err, &r) || !strings.HasPrefix(r.Detail, tc.prefix) {
				t.Fatalf("got %v, want a 409 starting %q", err, tc.prefix)
			}
			if _, ok, _ := f.store.Topic(tc.req.Name); ok {
				t.Fatal("the refused child was left behind")
			}
		})
	}
	if c := f.create(t, topics.CreateRequest{Caller: anyone, Name: "d2", Parent: "short", FanoutDelayMs: 1500}); c.FanoutDelayMs != 1500 {
		t.Fatalf("a delay the retention buffers: %+v", c)
	}
}

// Ensure that a schema-less child adopts the parent's history and a child
// whose schema equals the parent's as a JSON value attaches (internals.md
// §6.6).
func TestCreateAsChildSchemas(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "typed", Schema: []byte(`{"type":"object","required":["a"]}`)})
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "adopts", Parent: "typed"})
	if d := f.describe(t, "adopts"); d.SchemaVersion != 1 || string(d.Schema) != `{"type":"object","required":["a"]}` {
		t.Fatalf("adopted schema v%d %s", d.SchemaVersion, d.Schema)
	}
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "same", Parent: "typed", Schema: []byte(`{ "required": ["a"], "type": "object" }`)})
}

// Ensure that the 109th child is refused (conformance 84's limit, through
// create).
func TestCreateAsChildLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	for i := range meta.ChildrenMaxCount {
		f.create(t, topics.CreateRequest{Caller: anyone, Name: fmt.Sprintf("c%03d", i), Parent: "p"})
	}
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "one-more", Parent: "p"})
	var r *domain.Refusal
	if !errors.Is(err, domain.ErrConflict) || !errors.As(err, &r) || !strings.HasPrefix(r.Detail, "parent has reached the maximum number of children: ") {
		t.Fatalf("got %v", err)
	}
}

// Ensure that a missing parent answers 404 and leaves no child (conformance
// 35).
func TestCreateAsChildMissingParent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "c", Parent: "nope"})
	wantRefusal(t, err, domain.ErrTopicNotFound, "")
	if _, ok, _ := f.store.Topic("c"); ok {
		t.Fatal("the child was created")
	}
}

// Ensure that a child's partitions are placed away from the parent's
// (conformance 39), and that a remote owner's high watermark is asked for
// over PeerStats.
func TestCreateAsChildAntiAffineWithRemoteOwners(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2", "n3")
	peers := fake.NewPeerStats()
	f.rebuild(t, topics.WithPeerStats(peers))
	rp := f.create(t, topics.CreateRequest{Caller: anyone, Name: "rp"})
	for p := range int32(3) {
		if po, _, _ := f.store.Assignment("rp", p); po.Owner != self {
			peers.Set(po.Owner, domain.PartitionRef{Topic: "rp", TopicID: domain.TopicID(rp.ID), Partition: p}, ports.LogStats{HighWatermark: 9})
		}
	}
	c := f.create(t, topics.CreateRequest{Caller: anyone, Name: "rc", Parent: "rp"})
	for p := range int32(3) {
		po, _, _ := f.store.Assignment("rp", p)
		co, _, _ := f.store.Assignment("rc", p)
		if po.Owner == "" || po.Owner == co.Owner {
			t.Fatalf("partition %d: parent on %q, child on %q", p, po.Owner, co.Owner)
		}
		want := int64(9)
		if po.Owner == self {
			want = 0
		}
		if c.AttachOffsets[p] != want {
			t.Fatalf("attach offset %d = %d, want %d (owner %s)", p, c.AttachOffsets[p], want, po.Owner)
		}
	}
	if n := len(peers.Calls()); n != 2 {
		t.Fatalf("%d PeerStats calls, want one per remote owner (2)", n)
	}
}

// Ensure that an attach point that cannot be read answers 503 and links
// nothing (api.md §2.10: "nothing was linked").
func TestCreateAsChildUnreadableAttachPoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "n1", "n2")
	peers := fake.NewPeerStats()
	peers.Fail("n2", errors.New("no route"))
	f.rebuild(t, topics.WithPeerStats(peers))
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "rp"})
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "rc", Parent: "rp"})
	wantRefusal(t, err, domain.ErrUnavailable, "")
	if _, ok, _ := f.store.Topic("rc"); ok {
		t.Fatal("the child was created")
	}
}

// Ensure that a parent recreated under the request twice answers "topic
// changed since it was read".
func TestCreateAsChildParentRecreated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create(t, topics.CreateRequest{Caller: anyone, Name: "p"})
	f.store = &recreatingStore{MetadataStore: f.meta, t: t}
	f.build(t)
	_, err := f.svc.Create(context.Background(), topics.CreateRequest{Caller: anyone, Name: "c", Parent: "p"})
	wantRefusal(t, err, domain.ErrTopicChanged, "")
}

func (f *fixture) rebuild(t *testing.T, opts ...topics.Option) {
	t.Helper()
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, strings.NewReader(strings.Repeat("r", 4096)), serverDefaults, self, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
}

// isLink reports whether ev links a child under a parent.
func isLink(ev meta.Event) bool {
	switch e := ev.(type) {
	case *meta.CreateTopicWith:
		return e.Parent != nil
	case *meta.AttachChildIf:
		return true
	}
	return false
}

// recreatingStore deletes and recreates topic "p" just before every link
// is proposed.
type recreatingStore struct {
	ports.MetadataStore
	t *testing.T
	n int
}

func (s *recreatingStore) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	if isLink(env.Event) {
		s.n++
		for _, ev := range []meta.Event{&meta.DeleteTopic{Name: "p"}, &meta.CreateTopic{Name: "p", ID: fmt.Sprintf("%016x", s.n), Partitions: 3, RetentionMs: 0, VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1}} {
			if got, err := s.MetadataStore.Propose(ctx, meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
				s.t.Errorf("recreate p: %+v %v", got, err)
			}
		}
	}
	return s.MetadataStore.Propose(ctx, env)
}

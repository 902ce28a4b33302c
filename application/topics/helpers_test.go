package topics_test

import (
	"context"
	"crypto/rand"
	"errors"
	"github.com/narad/narad/domain/access"
	"regexp"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/topics"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// self is the node the service under test runs on.
const self = "n1"

// startTime is the fake clock's start.
var startTime = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

var idPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// serverDefaults are the conformance checklist's defaults.
var serverDefaults = topics.Defaults{
	Partitions: 3, MaxPartitions: 108, RetentionMs: 604_800_000,
	VisibilityMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024,
}

type fixture struct {
	svc    *topics.Service
	store  ports.MetadataStore
	meta   *fake.MetaStore
	logs   *fake.PartitionLogs
	schema *fake.SchemaValidator
	clock  *fake.Clock
}

// newFixture builds the service on fakes, with this node registered alive
// unless members says otherwise.
func newFixture(t *testing.T, members ...string) *fixture {
	t.Helper()
	f := &fixture{meta: fake.NewMetaStore(), logs: fake.NewPartitionLogs(), schema: fake.NewSchemaValidator(), clock: fake.NewClock(startTime)}
	f.store = f.meta
	if members == nil {
		members = []string{self}
	}
	for _, m := range members {
		f.propose(t, &meta.MemberJoin{ID: m, Addr: m + ":7942", ClusterAddr: m + ":7943"})
	}
	f.build(t)
	return f
}

func (f *fixture) build(t *testing.T) {
	t.Helper()
	svc, err := topics.New(f.store, f.logs, f.schema, f.clock, rand.Reader, serverDefaults, self)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
}

func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	got, err := f.meta.Propose(context.Background(), meta.Envelope{AtMs: startTime.UnixMilli(), Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
	}
}

func (f *fixture) create(t *testing.T, req topics.CreateRequest) meta.Topic {
	t.Helper()
	got, err := f.svc.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create %q: %v", req.Name, err)
	}
	if got.PlacementErr != nil {
		t.Fatalf("create %q: placement: %v", req.Name, got.PlacementErr)
	}
	return got.Topic
}

func (f *fixture) describe(t *testing.T, name string) topics.Description {
	t.Helper()
	d, err := f.svc.Describe(context.Background(), topics.DescribeRequest{Caller: anyone, Name: name})
	if err != nil {
		t.Fatalf("describe %q: %v", name, err)
	}
	return d
}

// commit writes n records to partition p of incarnation tp.
func (f *fixture) commit(t *testing.T, tp meta.Topic, p int32, n int) {
	t.Helper()
	ref := domain.PartitionRef{Topic: tp.Name, TopicID: domain.TopicID(tp.ID), Partition: p}
	for i := 0; i < n; i++ {
		if _, err := f.logs.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("m")}}); err != nil {
			t.Fatal(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// wantRefusal checks err is sentinel with exactly msg as its client message
// ("" skips the message).
func wantRefusal(t *testing.T, err, sentinel error, msg string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got %v, want %v", err, sentinel)
	}
	if msg == "" {
		return
	}
	var r *domain.Refusal
	if !errors.As(err, &r) || r.Detail != msg {
		t.Fatalf("message %q, want %q", err, msg)
	}
}

// anyone is a caller every access check lets through (security off).
var anyone = access.Open("test")

package partitionstats_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/partitionstats"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

const (
	self  = "n1"
	topic = "orders"
	live  = domain.TopicID("0123456789abcdef")
	older = domain.TopicID("fedcba9876543210")
)

var startTime = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	meta   *fake.MetaStore
	logs   *fake.PartitionLogs
	reader *partitionstats.Reader
}

// newFixture holds topic (incarnation live, 4 partitions) with partitions 0
// and 2 assigned here, 1 to n2 and 3 unplaced.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{meta: fake.NewMetaStore(), logs: fake.NewPartitionLogs()}
	f.propose(t, &meta.CreateTopic{Name: topic, ID: string(live), Partitions: 4, VisibilityTimeoutMs: 30_000, MaxInFlight: 1, MaxAckedAhead: 1})
	for p, owner := range map[int32]string{0: self, 1: "n2", 2: self} {
		f.propose(t, &meta.AssignPartitionIfAbsent{Topic: topic, TopicID: string(live), Partition: p, Owner: owner})
	}
	f.reader = partitionstats.New(f.meta, f.logs, self)
	return f
}

func (f *fixture) propose(t *testing.T, ev meta.Event) {
	t.Helper()
	got, err := f.meta.Propose(context.Background(), meta.Envelope{AtMs: startTime.UnixMilli(), Event: ev})
	if err != nil || !got.Result.OK() {
		t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
	}
}

func (f *fixture) commit(t *testing.T, p int32, n int) {
	t.Helper()
	ref := domain.PartitionRef{Topic: topic, TopicID: live, Partition: p}
	for range n {
		if _, err := f.logs.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("m")}}); err != nil {
			t.Fatal(err)
		}
	}
}

// ensure that the owner answers its partitions' log statistics in the
// order asked, for the live incarnation by id or by name alone (op 8,
// internals.md §6.6).
func TestOwnerAnswersItsPartitionsInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.commit(t, 2, 3)
	want2, err := f.logs.LogStats(domain.PartitionRef{Topic: topic, TopicID: live, Partition: 2})
	if err != nil || want2.HighWatermark != 3 {
		t.Fatalf("fixture: %+v %v", want2, err)
	}
	for _, id := range []domain.TopicID{live, ""} {
		got, err := f.reader.PartitionStats(context.Background(), topic, id, []int32{2, 0, 2})
		if err != nil {
			t.Fatalf("id %q: %v", id, err)
		}
		if len(got) != 3 || got[0] != want2 || got[1] != (ports.LogStats{}) || got[2] != want2 {
			t.Fatalf("id %q: %+v, want [%+v {} %+v]", id, got, want2, want2)
		}
	}
}

// ensure that the owner refuses, answering nothing, what it cannot vouch
// for: an incarnation it does not hold, a topic it does not know, a
// partition outside the topic, and a partition its replica does not assign
// to it (unplaced, another node's, or assigned to another incarnation).
func TestOwnerRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := map[string]struct {
		topic string
		id    domain.TopicID
		parts []int32
		want  error
	}{
		"other_incarnation":  {topic, older, []int32{0}, domain.ErrTopicNotFound},
		"absent_topic":       {"missing", "", []int32{0}, domain.ErrTopicNotFound},
		"negative_partition": {topic, live, []int32{0, -1}, domain.ErrPartitionOutOfRange},
		"beyond_partitions":  {topic, live, []int32{4}, domain.ErrPartitionOutOfRange},
		"another_nodes":      {topic, live, []int32{0, 1}, domain.ErrNotOwner},
		"unplaced":           {topic, live, []int32{3}, domain.ErrNotOwner},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := f.reader.PartitionStats(context.Background(), c.topic, c.id, c.parts)
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %+v, %v; want nothing and %v", got, err, c.want)
			}
		})
	}
	// A row left by an older incarnation (a delete and re-create the
	// replica has half applied) is not this incarnation's assignment.
	oldRow := partitionstats.New(oldRowStore{f.meta}, f.logs, self)
	if _, err := oldRow.PartitionStats(context.Background(), topic, live, []int32{0}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("row of an older incarnation: %v, want ErrNotOwner", err)
	}
}

// oldRowStore assigns every partition to self for incarnation older.
type oldRowStore struct{ *fake.MetaStore }

func (oldRowStore) Assignment(topic string, p int32) (meta.Assignment, bool, error) {
	return meta.Assignment{Topic: topic, TopicID: string(older), Partition: p, Owner: self}, true, nil
}

// ensure that a replica that cannot be read is a transient refusal, a
// log's own error passes through, and a caller that gave up gets ctx.Err().
func TestOwnerFailures(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	broken := partitionstats.New(failingStore{f.meta}, f.logs, self)
	if _, err := broken.PartitionStats(context.Background(), topic, live, []int32{0}); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("unreadable replica: %v, want ErrUnavailable", err)
	}
	_ = f.logs.Close()
	if _, err := f.reader.PartitionStats(context.Background(), topic, live, []int32{0}); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("closed logs: %v, want ErrClosed", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.reader.PartitionStats(ctx, topic, live, []int32{0}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// failingStore reads topics fine and fails every assignment read.
type failingStore struct{ *fake.MetaStore }

var errDisk = errors.New("replica disk gone")

func (failingStore) Assignment(string, int32) (meta.Assignment, bool, error) {
	return meta.Assignment{}, false, errDisk
}

// ensure that New refuses missing wiring.
func TestNewPanicsOnMissingDependency(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(){
		"store": func() { partitionstats.New(nil, fake.NewPartitionLogs(), self) },
		"logs":  func() { partitionstats.New(fake.NewMetaStore(), nil, self) },
		"self":  func() { partitionstats.New(fake.NewMetaStore(), fake.NewPartitionLogs(), "") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			build()
		})
	}
}

package consume_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// unconsumed asks the service for parts of topic's live incarnation and
// fails the test on an error.
func (e *env) unconsumed(topic string, parts ...int32) []int64 {
	e.t.Helper()
	got, err := e.svc.Unconsumed(context.Background(), topic, "", parts)
	if err != nil {
		e.t.Fatalf("unconsumed %s %v: %v", topic, parts, err)
	}
	return got
}

// leaseN leases the next n records of partition p of topic, in offset order.
func (e *env) leaseN(topic string, p int32, n int) []domain.Delivery {
	e.t.Helper()
	out := make([]domain.Delivery, n)
	for i := range out {
		out[i] = e.one(topic, p)
	}
	return out
}

// ensure that Unconsumed answers the committed ack frontier + 1 of a
// loaded partition (before the committer persisted anything), 0 when
// nothing was acked, and that an ack above the frontier does not move it
// until the gap below is acked (api.md §2.10.2 `from: unconsumed`).
func TestUnconsumedIsTheFrontierPlusOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 1, nil, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9")
	if got := e.unconsumed("orders", 0); !reflect.DeepEqual(got, []int64{0}) {
		t.Fatalf("nothing consumed: %v, want [0]", got)
	}
	ds := e.leaseN("orders", 0, 6)
	if got := e.unconsumed("orders", 0); !reflect.DeepEqual(got, []int64{0}) {
		t.Fatalf("leased, nothing acked: %v, want [0]", got)
	}
	for _, d := range ds[:4] {
		e.ack("orders", d)
	}
	if got := e.unconsumed("orders", 0); !reflect.DeepEqual(got, []int64{4}) {
		t.Fatalf("acked 0..3: %v, want [4]", got)
	}
	if w, _, _ := e.offsets.Counts(); w != 0 {
		t.Fatalf("the committer wrote %d times; the test means the in-memory frontier", w)
	}
	e.ack("orders", ds[5])
	if got := e.unconsumed("orders", 0); !reflect.DeepEqual(got, []int64{4}) {
		t.Fatalf("acked 5 ahead of 4: %v, want [4]", got)
	}
	e.ack("orders", ds[4])
	if got := e.unconsumed("orders", 0); !reflect.DeepEqual(got, []int64{6}) {
		t.Fatalf("acked 4 too: %v, want [6]", got)
	}
}

// ensure that the entries come in the order asked, duplicates included,
// each partition its own frontier.
func TestUnconsumedAnswersInPartsOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 3, nil, nil)
	for p := range int32(3) {
		e.produce(tp, p, "a", "b", "c")
	}
	for _, d := range e.leaseN("orders", 2, 2) {
		e.ack("orders", d)
	}
	e.ack("orders", e.one("orders", 1))
	got := e.unconsumed("orders", 2, 0, 1, 2)
	if want := []int64{2, 0, 1, 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := e.unconsumed("orders"); len(got) != 0 {
		t.Fatalf("no partitions asked: %v", got)
	}
}

// ensure that a partition not loaded since start answers its persisted
// frontier, and that asking creates no shard for it.
func TestUnconsumedReadsThePersistedFrontier(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	tp := e.createTopic("orders", 2, nil, nil)
	e.produce(tp, 0, "0", "1", "2", "3", "4")
	ds := e.leaseN("orders", 0, 4)
	for _, i := range []int{0, 1, 3} {
		e.ack("orders", ds[i])
	}
	e.restart(e.offsets, true) // Close persists the frontier exactly
	if got := e.unconsumed("orders", 0, 1); !reflect.DeepEqual(got, []int64{2, 0}) {
		t.Fatalf("after restart: %v, want [2 0]", got)
	}
	if st := e.svc.Stats(); len(st) != 0 {
		t.Fatalf("asking loaded shards: %+v", st)
	}
}

// failingLoads is an offset store whose Load fails.
type failingLoads struct {
	ports.OffsetStore
	err error
}

func (f failingLoads) Load(domain.PartitionRef) (ports.ConsumerOffsets, error) {
	return ports.NoOffsets, f.err
}

var errDisk = errors.New("disk on fire")

// ensure that Unconsumed refuses what the owner-side reads refuse: another
// incarnation or topic, a partition outside the topic, another node's or an
// unassigned partition, an unreadable persisted frontier, an ended context
// and a closed service.
func TestUnconsumedRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, consume.Options{})
	owners := []string{self, "node-2", ""}
	tp := e.createTopic("orders", 3, nil, func(p int32) string { return owners[p] })
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := map[string]struct {
		ctx   context.Context
		topic string
		id    domain.TopicID
		parts []int32
		want  error
	}{
		"absent topic":      {ctx, "nope", "", []int32{0}, domain.ErrTopicNotFound},
		"other incarnation": {ctx, "orders", "fedcba9876543210", []int32{0}, domain.ErrTopicNotFound},
		"out of range":      {ctx, "orders", "", []int32{0, 3}, domain.ErrPartitionOutOfRange},
		"negative":          {ctx, "orders", "", []int32{-1}, domain.ErrPartitionOutOfRange},
		"another node's":    {ctx, "orders", "", []int32{0, 1}, domain.ErrNotOwner},
		"unassigned":        {ctx, "orders", domain.TopicID(tp.ID), []int32{2}, domain.ErrNotOwner},
		"ended context":     {cancelled, "orders", "", []int32{0}, context.Canceled},
	}
	for name, c := range cases {
		got, err := e.svc.Unconsumed(c.ctx, c.topic, c.id, c.parts)
		if !errors.Is(err, c.want) || got != nil {
			t.Errorf("%s: %v, %v; want nothing and %v", name, got, err, c.want)
		}
	}
	if got, err := e.svc.Unconsumed(ctx, "orders", domain.TopicID(tp.ID), []int32{0}); err != nil || !reflect.DeepEqual(got, []int64{0}) {
		t.Fatalf("the live incarnation by id: %v, %v", got, err)
	}
	e.restart(failingLoads{OffsetStore: e.offsets, err: errDisk}, true)
	if _, err := e.svc.Unconsumed(ctx, "orders", "", []int32{0}); !errors.Is(err, domain.ErrUnavailable) || !errors.Is(err, errDisk) {
		t.Fatalf("unreadable frontier: %v", err)
	}
	if err := e.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Unconsumed(ctx, "orders", "", []int32{0}); !errors.Is(err, domain.ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}

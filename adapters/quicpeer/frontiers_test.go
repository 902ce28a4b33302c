package quicpeer

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/consume"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
)

// fakeFrontiers answers every request with offsets (or err) and records it.
type fakeFrontiers struct {
	mu      sync.Mutex
	got     []partsRequest
	offsets []int64
	err     error
}

func (f *fakeFrontiers) Unconsumed(_ context.Context, topic string, id domain.TopicID, parts []int32) ([]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, partsRequest{topic: topic, id: id, parts: append([]int32{}, parts...)})
	return f.offsets, f.err
}

func (f *fakeFrontiers) requests() []partsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]partsRequest(nil), f.got...)
}

func (f *fakeFrontiers) set(offsets []int64, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offsets, f.err = offsets, err
}

// startFrontiersOwner serves op 38 with r over real UDP and returns a
// caller's Peers that knows the server as "owner".
func startFrontiersOwner(t *testing.T, r *fakeFrontiers) *Peers {
	t.Helper()
	srv, _ := newServer(t, ServerOptions{})
	RegisterConsumerFrontiers(srv, r)
	c, _ := newClient(t, secretA)
	return NewPeers(c, staticResolver{"owner": srv.Addr().String()})
}

// ensure that a frontiers request crosses two nodes intact and the owner's
// offsets come back in the order asked (op 38).
func TestConsumerFrontiersCrossTwoNodes(t *testing.T) {
	t.Parallel()
	r := &fakeFrontiers{offsets: []int64{4, 0, 1 << 40}}
	p := startFrontiersOwner(t, r)
	got, err := p.Unconsumed(context.Background(), "owner", "orders", "0123456789abcdef", []int32{5, 0, 2})
	if err != nil || !reflect.DeepEqual(got, []int64{4, 0, 1 << 40}) {
		t.Fatalf("Unconsumed = %v, %v", got, err)
	}
	want := partsRequest{topic: "orders", id: "0123456789abcdef", parts: []int32{5, 0, 2}}
	if asked := r.requests(); len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
		t.Fatalf("owner was asked %+v, want %+v", asked, want)
	}
}

// ensure that the owner's refusals come back as the domain sentinels, and
// that an owner answering the wrong number of entries or a negative offset
// is an error, never a misaligned answer.
func TestConsumerFrontiersRefusalsMapToDomainSentinels(t *testing.T) {
	t.Parallel()
	r := &fakeFrontiers{}
	p := startFrontiersOwner(t, r)
	cases := map[string]struct {
		offsets  []int64
		ownerErr error
		want     error
	}{
		"topic_not_found": {nil, fmt.Errorf("consume: incarnation: %w", domain.ErrTopicNotFound), domain.ErrTopicNotFound},
		"not_owner":       {nil, fmt.Errorf("consume: p1: %w", domain.ErrNotOwner), domain.ErrNotOwner},
		"out_of_range":    {nil, domain.ErrPartitionOutOfRange, domain.ErrPartitionOutOfRange},
		"unavailable":     {nil, fmt.Errorf("load: %w", domain.ErrUnavailable), domain.ErrUnavailable},
		"closed":          {nil, fmt.Errorf("consume: %w", domain.ErrClosed), domain.ErrClosed},
		"short_answer":    {[]int64{1}, nil, ErrRemote},
		"negative_offset": {[]int64{1, -1}, nil, ErrRemote},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r.set(c.offsets, c.ownerErr)
			got, err := p.Unconsumed(context.Background(), "owner", "orders", "", []int32{0, 1})
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %v, %v; want nothing and %v", got, err, c.want)
			}
		})
	}
}

// ensure that an owner that does not serve op 38 (an older release) is
// told apart by ErrUnsupportedOp, an unknown node by ErrNoAddress, and that
// more partitions than an owner would decode are refused before sending.
func TestConsumerFrontiersUnsupportedUnknownAndAboveCap(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"old": srv.Addr().String()})
	if _, err := p.Unconsumed(context.Background(), "old", "t", "", []int32{0}); !errors.Is(err, ErrUnsupportedOp) {
		t.Fatalf("old owner: %v, want ErrUnsupportedOp", err)
	}
	if _, err := p.Unconsumed(context.Background(), "stranger", "t", "", []int32{0}); !errors.Is(err, ErrNoAddress) {
		t.Fatalf("unknown node: %v, want ErrNoAddress", err)
	}
	if _, err := p.Unconsumed(t.Context(), "old", "t", "", make([]int32, frontiersPartitionsMaxCount+1)); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("above the cap: %v, want ErrInvalidArgument", err)
	}
}

// ensure that the consume use case behind the wire answers its own
// partitions' frontiers and refuses another node's partition and another
// incarnation (the bootstrap wiring of op 38).
func TestConsumerFrontiersOverTheConsumeUseCase(t *testing.T) {
	t.Parallel()
	const id = "0123456789abcdef"
	ctx := context.Background()
	store, logs := fake.NewMetaStore(), fake.NewPartitionLogs()
	for _, ev := range []meta.Event{
		&meta.CreateTopic{Name: "orders", ID: id, Partitions: 2, VisibilityTimeoutMs: 30_000, MaxInFlight: 16, MaxAckedAhead: 16},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: id, Partition: 0, Owner: "owner"},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: id, Partition: 1, Owner: "other"},
	} {
		if got, err := store.Propose(ctx, meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
			t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
		}
	}
	ref := domain.PartitionRef{Topic: "orders", TopicID: id, Partition: 0}
	if _, err := logs.CommitDurable(ctx, ref, []domain.Record{{Payload: []byte("a")}, {Payload: []byte("b")}, {Payload: []byte("c")}}); err != nil {
		t.Fatal(err)
	}
	svc, err := consume.New(consume.Deps{Topics: store, Cluster: store, Logs: logs, Offsets: fake.NewOffsets(),
		Clock: fake.NewClock(time.Unix(1_800_000_000, 0)), Metrics: &fake.Metrics{}, SelfID: "owner", Seeds: rand.Reader}, consume.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	ds, err := svc.Consume(ctx, consume.Request{Topic: "orders", Mode: consume.ModeBatch, Pinned: true, Max: 2, Identity: "c"})
	if err != nil || len(ds) != 2 {
		t.Fatalf("consume: %d deliveries, %v", len(ds), err)
	}
	for _, d := range ds {
		if err := svc.Ack(ctx, "orders", *d.Handle); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := newServer(t, ServerOptions{})
	RegisterConsumerFrontiers(srv, svc)
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"owner": srv.Addr().String()})
	if got, err := p.Unconsumed(ctx, "owner", "orders", id, []int32{0}); err != nil || !reflect.DeepEqual(got, []int64{2}) {
		t.Fatalf("own partition: %v, %v; want [2]", got, err)
	}
	if _, err := p.Unconsumed(ctx, "owner", "orders", id, []int32{0, 1}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("another node's partition: %v, want ErrNotOwner", err)
	}
	if _, err := p.Unconsumed(ctx, "owner", "orders", "fedcba9876543210", []int32{0}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}

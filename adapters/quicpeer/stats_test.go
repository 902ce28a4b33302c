package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/partitionstats"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// fakeStatsReader answers every request with stats (or err) and records it.
type fakeStatsReader struct {
	mu    sync.Mutex
	got   []partsRequest
	stats []ports.LogStats
	err   error
}

func (f *fakeStatsReader) PartitionStats(_ context.Context, topic string, id domain.TopicID, parts []int32) ([]ports.LogStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, partsRequest{topic: topic, id: id, parts: append([]int32{}, parts...)})
	return f.stats, f.err
}

func (f *fakeStatsReader) requests() []partsRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]partsRequest(nil), f.got...)
}

func (f *fakeStatsReader) set(stats []ports.LogStats, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats, f.err = stats, err
}

// startStatsOwner serves op 8 with r over real UDP and returns a caller's
// Peers that knows the server as "owner".
func startStatsOwner(t *testing.T, r StatsReader) *Peers {
	t.Helper()
	srv, _ := newServer(t, ServerOptions{})
	RegisterPartitionStats(srv, r)
	c, _ := newClient(t, secretA)
	return NewPeers(c, staticResolver{"owner": srv.Addr().String()})
}

// ensure that a stats request crosses two nodes intact and the owner's
// entries come back in the order asked (op 8, internals.md §6.6).
func TestPartitionStatsCrossesTwoNodes(t *testing.T) {
	t.Parallel()
	r := &fakeStatsReader{stats: sampleStats()}
	p := startStatsOwner(t, r)
	got, err := p.PartitionStats(context.Background(), "owner", "orders", "0123456789abcdef", []int32{5, 0, 2})
	if err != nil || !reflect.DeepEqual(got, sampleStats()) {
		t.Fatalf("PartitionStats = %+v, %v; want %+v", got, err, sampleStats())
	}
	want := partsRequest{topic: "orders", id: "0123456789abcdef", parts: []int32{5, 0, 2}}
	if asked := r.requests(); len(asked) != 1 || !reflect.DeepEqual(asked[0], want) {
		t.Fatalf("owner was asked %+v, want %+v", asked, want)
	}
}

// ensure that the owner's refusals come back as the domain sentinels
// describe and the attach point read, and that an owner answering the
// wrong number of entries is an error, never a misaligned answer.
func TestPartitionStatsRefusalsMapToDomainSentinels(t *testing.T) {
	t.Parallel()
	r := &fakeStatsReader{}
	p := startStatsOwner(t, r)
	cases := map[string]struct {
		stats    []ports.LogStats
		ownerErr error
		want     error
	}{
		"topic_not_found": {nil, fmt.Errorf("partitionstats: incarnation: %w", domain.ErrTopicNotFound), domain.ErrTopicNotFound},
		"not_owner":       {nil, fmt.Errorf("partitionstats: p1: %w", domain.ErrNotOwner), domain.ErrNotOwner},
		"out_of_range":    {nil, domain.ErrPartitionOutOfRange, domain.ErrPartitionOutOfRange},
		"unavailable":     {nil, fmt.Errorf("read: %w", domain.ErrUnavailable), domain.ErrUnavailable},
		"log_closed":      {nil, fmt.Errorf("peek: %w", domain.ErrLogClosed), domain.ErrLogClosed},
		"short_answer":    {sampleStats()[:1], nil, ErrRemote},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r.set(c.stats, c.ownerErr)
			got, err := p.PartitionStats(context.Background(), "owner", "orders", "", []int32{0, 1})
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %+v, %v; want nothing and %v", got, err, c.want)
			}
		})
	}
}

// ensure that an owner that does not serve op 8 (an older release) is told
// apart by ErrUnsupportedOp, and an unknown node by ErrNoAddress.
func TestPartitionStatsUnsupportedAndUnknownNode(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, ServerOptions{})
	c, _ := newClient(t, secretA)
	p := NewPeers(c, staticResolver{"old": srv.Addr().String()})
	if _, err := p.PartitionStats(context.Background(), "old", "t", "", []int32{0}); !errors.Is(err, ErrUnsupportedOp) {
		t.Fatalf("old owner: %v, want ErrUnsupportedOp", err)
	}
	if _, err := p.PartitionStats(context.Background(), "stranger", "t", "", []int32{0}); !errors.Is(err, ErrNoAddress) {
		t.Fatalf("unknown node: %v, want ErrNoAddress", err)
	}
}

// ensure that the owner's use case behind the wire answers its own
// partitions and refuses another node's (the bootstrap wiring of op 8).
func TestPartitionStatsOverTheOwnerUseCase(t *testing.T) {
	t.Parallel()
	store, logs := fake.NewMetaStore(), fake.NewPartitionLogs()
	for _, ev := range []meta.Event{
		&meta.CreateTopic{Name: "orders", ID: "0123456789abcdef", Partitions: 3, VisibilityTimeoutMs: 1, MaxInFlight: 1, MaxAckedAhead: 1},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "0123456789abcdef", Partition: 0, Owner: "owner"},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: "0123456789abcdef", Partition: 1, Owner: "other"},
	} {
		if got, err := store.Propose(context.Background(), meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
			t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
		}
	}
	ref := domain.PartitionRef{Topic: "orders", TopicID: "0123456789abcdef", Partition: 0}
	if _, err := logs.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("abc")}}); err != nil {
		t.Fatal(err)
	}
	want, _ := logs.LogStats(ref)
	p := startStatsOwner(t, partitionstats.New(store, logs, "owner"))
	got, err := p.PartitionStats(context.Background(), "owner", "orders", "0123456789abcdef", []int32{0})
	if err != nil || len(got) != 1 || !got[0].OldestSegmentAt.Equal(want.OldestSegmentAt) || got[0].HighWatermark != 1 || got[0].SizeBytes != want.SizeBytes {
		t.Fatalf("own partition: %+v, %v; want %+v", got, err, want)
	}
	if _, err := p.PartitionStats(context.Background(), "owner", "orders", "0123456789abcdef", []int32{0, 1}); !errors.Is(err, domain.ErrNotOwner) {
		t.Fatalf("another node's partition: %v, want ErrNotOwner", err)
	}
	if _, err := p.PartitionStats(context.Background(), "owner", "orders", "fedcba9876543210", []int32{0}); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}

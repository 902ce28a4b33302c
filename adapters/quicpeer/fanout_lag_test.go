package quicpeer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/fanout"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// fakeLagReader answers every request with lags (or err) and records it.
type fakeLagReader struct {
	mu   sync.Mutex
	got  []fanoutLagRequest
	lags []ports.CursorLag
	err  error
}

func (f *fakeLagReader) FanoutLag(_ context.Context, parent string, id domain.TopicID, parts []int32, children []ports.ChildEpoch) ([]ports.CursorLag, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fanoutLagRequest{parent: parent, parentID: id, parts: append([]int32{}, parts...),
		children: append([]ports.ChildEpoch{}, children...)})
	return f.lags, f.err
}

func (f *fakeLagReader) requests() []fanoutLagRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fanoutLagRequest(nil), f.got...)
}

func (f *fakeLagReader) set(lags []ports.CursorLag, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lags, f.err = lags, err
}

// startLagOwner serves op 17 with r over real UDP and returns a caller's
// Peers that knows the server as "owner".
func startLagOwner(t *testing.T, r FanoutLagReader) *Peers {
	t.Helper()
	srv, _ := newServer(t, ServerOptions{})
	RegisterFanoutCursors(srv, r)
	c, _ := newClient(t, secretA)
	return NewPeers(c, staticResolver{"owner": srv.Addr().String()})
}

// ensure that a FanoutCursors request crosses two nodes intact and the
// owner's entries come back in the order asked (op 17, api.md §2.11).
func TestFanoutLagCrossesTwoNodes(t *testing.T) {
	t.Parallel()
	want := append(sampleLags(), ports.CursorLag{Reported: true, HighWatermark: 9})
	r := &fakeLagReader{lags: want}
	p := startLagOwner(t, r)
	children := []ports.ChildEpoch{{Child: "audit", Epoch: "00000000000000e1"}, {Child: "billing", Epoch: "00000000000000e2"}}
	got, err := p.FanoutLag(context.Background(), "owner", "orders", "0123456789abcdef", []int32{5, 0}, children)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("FanoutLag = %+v, %v; want %+v", got, err, want)
	}
	asked := fanoutLagRequest{parent: "orders", parentID: "0123456789abcdef", parts: []int32{5, 0}, children: children}
	if reqs := r.requests(); len(reqs) != 1 || !reflect.DeepEqual(reqs[0], asked) {
		t.Fatalf("owner was asked %+v, want %+v", reqs, asked)
	}
}

// ensure that the owner's refusals come back as domain sentinels, that an
// answer of the wrong length is an error rather than a misaligned
// answer, that an older owner is told apart by ErrUnsupportedOp, and that
// more pairs than one call carries are refused before sending.
func TestFanoutLagRefusals(t *testing.T) {
	t.Parallel()
	r := &fakeLagReader{}
	p := startLagOwner(t, r)
	audit := []ports.ChildEpoch{{Child: "audit", Epoch: "e"}}
	cases := map[string]struct {
		lags     []ports.CursorLag
		ownerErr error
		want     error
	}{
		"topic_not_found": {nil, fmt.Errorf("fanout: incarnation: %w", domain.ErrTopicNotFound), domain.ErrTopicNotFound},
		"unavailable":     {nil, fmt.Errorf("read: %w", domain.ErrUnavailable), domain.ErrUnavailable},
		"short_answer":    {sampleLags()[:1], nil, ErrRemote},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r.set(c.lags, c.ownerErr)
			got, err := p.FanoutLag(context.Background(), "owner", "orders", "", []int32{0, 1}, audit)
			if !errors.Is(err, c.want) || got != nil {
				t.Fatalf("got %+v, %v; want nothing and %v", got, err, c.want)
			}
		})
	}
	srv, _ := newServer(t, ServerOptions{})
	c, _ := newClient(t, secretA)
	old := NewPeers(c, staticResolver{"old": srv.Addr().String()})
	if _, err := old.FanoutLag(context.Background(), "old", "orders", "", []int32{0}, audit); !errors.Is(err, ErrUnsupportedOp) {
		t.Fatalf("old owner: %v, want ErrUnsupportedOp", err)
	}
	tooMany := make([]ports.ChildEpoch, fanoutPairsMaxCount/1024+1)
	if _, err := p.FanoutLag(context.Background(), "owner", "orders", "", make([]int32, 1024), tooMany); !errors.Is(err, domain.ErrInvalidArgument) {
		t.Fatalf("above the pair cap: %v, want ErrInvalidArgument", err)
	}
	if n := len(r.requests()); n != len(cases) {
		t.Fatalf("owner saw %d requests, want %d (the refused one never sent)", n, len(cases))
	}
}

// ensure that the owner's use case behind the wire reads its cursor files
// at the epoch asked and leaves other nodes' partitions unreported (the
// bootstrap wiring of op 17).
func TestFanoutLagOverTheOwnerUseCase(t *testing.T) {
	t.Parallel()
	const id = "0123456789abcdef"
	store, logs, cursors := fake.NewMetaStore(), fake.NewPartitionLogs(), fake.NewFanoutCursors()
	t.Cleanup(store.Close)
	for _, ev := range []meta.Event{
		&meta.CreateTopic{Name: "orders", ID: id, Partitions: 2, VisibilityTimeoutMs: 1, MaxInFlight: 1, MaxAckedAhead: 1},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: id, Partition: 0, Owner: "owner"},
		&meta.AssignPartitionIfAbsent{Topic: "orders", TopicID: id, Partition: 1, Owner: "other"},
	} {
		if got, err := store.Propose(context.Background(), meta.Envelope{Event: ev}); err != nil || !got.Result.OK() {
			t.Fatalf("propose %s: %+v %v", ev.Type(), got, err)
		}
	}
	ref := domain.PartitionRef{Topic: "orders", TopicID: id, Partition: 0}
	for range 3 {
		if _, err := logs.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("abc")}}); err != nil {
			t.Fatal(err)
		}
	}
	cursors.Put(ref, "audit", ports.FanoutCursor{Epoch: "00000000000000e1", NextOffset: 1})
	engine := fanout.New(fanout.Deps{
		Store: store, Logs: logs, Cursors: cursors, Local: nopCommitter{}, Peers: fake.NewPeerCommitter(),
		Latch: leaderconfirm.NewLatch(store), Confirmer: leaderconfirm.New(store), Clock: fake.NewClock(time.Unix(0, 0)),
		Metrics: fanout.NopMetrics{}, Log: slog.New(slog.DiscardHandler), Self: "owner",
	}, fanout.Options{}) // never run: the lag comes from the files
	p := startLagOwner(t, fanout.NewLagReader(engine, logs))
	children := []ports.ChildEpoch{{Child: "audit", Epoch: "00000000000000e1"}, {Child: "audit2", Epoch: "00000000000000e2"}}
	got, err := p.FanoutLag(context.Background(), "owner", "orders", id, []int32{0, 1}, children)
	want := []ports.CursorLag{{Reported: true, NextOffset: 1, HighWatermark: 3}, {}, {}, {}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if _, err := p.FanoutLag(context.Background(), "owner", "orders", "fedcba9876543210", []int32{0}, children); !errors.Is(err, domain.ErrTopicNotFound) {
		t.Fatalf("another incarnation: %v, want ErrTopicNotFound", err)
	}
}

// nopCommitter stands in for the local committer of an engine that never runs.
type nopCommitter struct{}

func (nopCommitter) CommitBatch(context.Context, ports.CommitRequest) (int64, error) {
	return 0, errors.New("not used")
}

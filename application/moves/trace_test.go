package moves_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// trace records the steps of one move as the destination takes them.
type trace struct {
	mu    sync.Mutex
	lines []string
}

func (tr *trace) add(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *trace) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.lines, "\n") + "\n"
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// tracedPeers records the source calls a move makes (chunk reads are
// too many to be worth a line).
type tracedPeers struct {
	ports.PeerTransfer
	tr *trace
}

func (p tracedPeers) TransferListing(ctx context.Context, node string, ref domain.PartitionRef) (ports.TransferListing, error) {
	l, err := p.PeerTransfer.TransferListing(ctx, node, ref)
	p.tr.add("list %s: hwm %d, %s", node, l.HighWatermark, outcome(err))
	return l, err
}

func (p tracedPeers) PrepareHandoff(ctx context.Context, node string, ref domain.PartitionRef, token string) (string, ports.TransferListing, error) {
	tok, l, err := p.PeerTransfer.PrepareHandoff(ctx, node, ref, token)
	what := "freeze"
	if token != "" {
		what = "re-arm"
	}
	p.tr.add("%s %s: hwm %d, %s", what, node, l.HighWatermark, outcome(err))
	return tok, l, err
}

// tracedInstaller records the destination's staging and installs.
type tracedInstaller struct {
	*fake.Installer
	tr *trace
}

func (i tracedInstaller) StagingReset(ref domain.PartitionRef) error {
	i.tr.add("staging reset")
	return i.Installer.StagingReset(ref)
}

func (i tracedInstaller) StagingRemove(ref domain.PartitionRef) error {
	i.tr.add("staging removed")
	return i.Installer.StagingRemove(ref)
}

func (i tracedInstaller) Install(ref domain.PartitionRef, m ports.MoveMarker) error {
	i.tr.add("install at %d, forced %v", m.PromotedHighWatermark, m.Forced)
	return i.Installer.Install(ref, m)
}

func (i tracedInstaller) Uninstall(ref domain.PartitionRef) error {
	i.tr.add("take the copy back to staging")
	return i.Installer.Uninstall(ref)
}

// tracedStore records the flips proposed and how they came back; with
// loseFirst, the first applied flip answers an error as a leader that lost
// the reply would.
type tracedStore struct {
	*fake.MetaStore
	tr        *trace
	loseFirst bool
	mu        sync.Mutex
	flips     int
}

func (s *tracedStore) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	a, err := s.MetaStore.Propose(ctx, env)
	if _, ok := env.Event.(*meta.CompleteMove); !ok {
		return a, err
	}
	s.mu.Lock()
	s.flips++
	lost := s.loseFirst && s.flips == 1 && err == nil
	s.mu.Unlock()
	switch {
	case lost:
		s.tr.add("flip: applied %s, reply lost", a.Result)
		return ports.MetaApplied{}, fmt.Errorf("reply lost")
	case err != nil:
		s.tr.add("flip: error")
	default:
		s.tr.add("flip: %s", a.Result)
	}
	return a, err
}

// Ensure that each scenario in testdata/trace/ still takes the steps
// recorded for it (internals.md §11.3-11.6, the move's state machine);
// run with -update after a deliberate change, and read the diff.
func TestMoveTraceGolden(t *testing.T) {
	for _, sc := range []struct {
		name  string
		setup func(t *testing.T, s *tracedStore, src *fake.TransferSource, clock *settableClock)
	}{
		{"clean", func(*testing.T, *tracedStore, *fake.TransferSource, *settableClock) {}},
		{"freeze-lapses", func(_ *testing.T, _ *tracedStore, src *fake.TransferSource, _ *settableClock) {
			var once sync.Once
			src.OnFreeze = func(src *fake.TransferSource) {
				if src.Freezes() == 2 {
					once.Do(func() { src.Lapse(); src.Append("00000000000000000300.log", []byte("+late"), 1) })
				}
			}
		}},
		{"aborted-under-freeze", func(t *testing.T, s *tracedStore, src *fake.TransferSource, _ *settableClock) {
			var once sync.Once
			src.OnFreeze = func(src *fake.TransferSource) {
				if src.Freezes() >= 3 {
					once.Do(func() {
						commit(t, s.MetaStore, &meta.AbortMove{Topic: "t", TopicID: topicID, Partition: 0, ExpectedTarget: "n2"})
					})
				}
			}
		}},
		{"reply-lost", func(_ *testing.T, s *tracedStore, _ *fake.TransferSource, _ *settableClock) { s.loseFirst = true }},
		{"source-dead", func(t *testing.T, s *tracedStore, src *fake.TransferSource, clock *settableClock) {
			propose(t, s.MetaStore, &meta.MemberJoin{ID: "n1", Addr: "127.0.0.1:1", ClusterAddr: "127.0.0.1:2"}, &meta.MemberDead{ID: "n1"})
			clock.set(time.UnixMilli(1_700_000_000_000).Add(moves.ForcePromoteAfter))
			src.OnFreeze = func(src *fake.TransferSource) { src.SetDown(true) }
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			meta0, src, _, _ := moveFixture(t, nil)
			tr := &trace{}
			store := &tracedStore{MetaStore: meta0, tr: tr}
			clock := &settableClock{now: time.UnixMilli(1_700_000_000_000)}
			sc.setup(t, store, src, clock)
			obs := &countingObserver{}
			r := moves.NewRunner(moves.RunnerDeps{Store: store, Peers: tracedPeers{src, tr}, Installer: tracedInstaller{fake.NewInstaller(), tr},
				Clock: clock, Log: slog.New(slog.DiscardHandler), Self: "n2", Metrics: obs})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); r.Run(ctx) }()
			waitEnded(t, obs, 1)
			cancel()
			<-done
			row, _, _ := meta0.Assignment("t", 0)
			tr.add("end: owner %s, target %q", row.Owner, row.Target)
			checkGolden(t, filepath.Join("testdata", "trace", sc.name+".txt"), tr.String())
		})
	}
}

// updating reports whether the test binary runs with -update (the flag
// lives in the package's internal tests).
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func checkGolden(t *testing.T, file, got string) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("steps differ from %s (run with -update after checking):\n%s\nwant:\n%s", file, got, want)
	}
}

package moves_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// lostReply applies the first CompleteMove it is given and answers an
// error anyway, as a leader that lost the reply would.
type lostReply struct {
	*fake.MetaStore
	mu   sync.Mutex
	lost int
}

func (s *lostReply) Propose(ctx context.Context, env meta.Envelope) (ports.MetaApplied, error) {
	applied, err := s.MetaStore.Propose(ctx, env)
	if _, ok := env.Event.(*meta.CompleteMove); ok && err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.lost++; s.lost == 1 {
			return ports.MetaApplied{}, errors.New("leadership lost mid-commit")
		}
	}
	return applied, err
}

// Ensure that a flip whose reply was lost is read back as done from the
// leader (an error is not proof of failure) and the copy stays installed,
// with the topic's links in its move marker (internals.md §11.4, §11.5).
func TestFlipWithALostReplyIsReadBackAsDone(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{}
	s, _, inst, _ := moveFixture(t, obs)
	propose(t, s, &meta.CreateTopic{Name: "t-dr", ID: "00000000000000b2", Partitions: 1, VisibilityTimeoutMs: 30_000})
	propose(t, s, &meta.AttachChild{Parent: "t", Child: "t-dr", Epoch: "00000000000000e7"})
	store := &lostReply{MetaStore: s}
	r := moves.NewRunner(moves.RunnerDeps{Store: store, Peers: mustSource(t), Installer: inst,
		Clock: fixedClock(time.UnixMilli(1_700_000_000_000)), Log: slog.New(slog.DiscardHandler), Self: "n2", Metrics: obs})
	run(t, r)
	waitOwner(t, s, "n2")
	waitEnded(t, obs, 1)
	got, ok := inst.Installed(ref0)
	if !ok || got.Marker.PromotedHighWatermark != 302 || got.Marker.Forced || !got.Marker.Has("t-dr", "00000000000000e7") {
		t.Fatalf("installed %v with marker %+v", ok, got.Marker)
	}
	if inst.Uninstalls() != 0 {
		t.Fatal("a flip that committed was taken off")
	}
}

// Ensure that a move aborted under its freeze, after the install, takes
// the copy back to staging when the leader read shows the flip cannot
// commit, removes the staging once the move no longer targets this node,
// and stops (internals.md §11.5).
func TestAbortedFlipTakesTheCopyOff(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{}
	s, src, inst, r := moveFixture(t, obs)
	var once sync.Once
	src.OnFreeze = func(src *fake.TransferSource) {
		if src.Freezes() >= 3 { // the fence: the install comes next
			once.Do(func() {
				commit(t, s, &meta.AbortMove{Topic: "t", TopicID: topicID, Partition: 0, ExpectedTarget: "n2"})
			})
		}
	}
	run(t, r)
	waitEnded(t, obs, 1)
	if row, _, _ := s.Assignment("t", 0); row.Owner != "n1" || row.Target != "" {
		t.Fatalf("row %+v after the abort", row)
	}
	if _, ok := inst.Installed(ref0); ok || inst.Staged(ref0) {
		t.Fatalf("after the abort: installed %v, staged %v; want neither", ok, inst.Staged(ref0))
	}
}

// Ensure that a move whose source died for good is force-promoted once
// the source has been dead ForcePromoteAfter: the copy of its last listing
// is installed with a forced marker and the partition flips; a source
// dead for less is waited for (internals.md §11.6).
func TestForcePromoteWhenTheSourceStaysDead(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{}
	s, src, inst, _ := moveFixture(t, obs)
	propose(t, s, &meta.MemberJoin{ID: "n1", Addr: "127.0.0.1:1", ClusterAddr: "127.0.0.1:2"}, &meta.MemberDead{ID: "n1"})
	src.OnFreeze = func(src *fake.TransferSource) { src.SetDown(true) } // dies at the first freeze
	died := time.UnixMilli(1_700_000_000_000)
	clock := &settableClock{now: died.Add(time.Minute)}
	r := moves.NewRunner(moves.RunnerDeps{Store: s, Peers: src, Installer: inst, Clock: clock,
		Log: slog.New(slog.DiscardHandler), Self: "n2", Metrics: obs})
	run(t, r)
	waitBlocked(t, r, "source_dead")
	if row, _, _ := s.Assignment("t", 0); row.Owner != "n1" {
		t.Fatalf("flipped %+v while the source was dead for only a minute", row)
	}
	clock.set(died.Add(moves.ForcePromoteAfter + time.Second))
	waitOwner(t, s, "n2")
	got, ok := inst.Installed(ref0)
	if !ok || !got.Marker.Forced || got.HWM != 302 || string(got.Files["00000000000000000300.log"]) != "tail-frames" {
		t.Fatalf("force-promoted %v at %d, marker %+v", ok, got.HWM, got.Marker)
	}
}

func mustSource(t *testing.T) *fake.TransferSource {
	t.Helper()
	src := fake.NewTransferSource()
	src.Append("00000000000000000000.log", make([]byte, 3<<20), 300)
	src.Append("00000000000000000300.log", []byte("tail-frames"), 2)
	return src
}

func waitEnded(t *testing.T, obs *countingObserver, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, _, ended, _ := obs.snapshot(); ended >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the move did not end")
		}
		time.Sleep(5 * time.Millisecond) // polling the runner, bounded by the deadline
	}
}

func waitBlocked(t *testing.T, r *moves.Runner, reason string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if r.BlockedCounts()[reason] > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no move reported blocked by %s: %+v", reason, r.Reports())
		}
		time.Sleep(5 * time.Millisecond) // polling the runner, bounded by the deadline
	}
}

// settableClock is a clock a test moves by hand.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *settableClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// propose writes evs through the replica's validation and apply, failing
// the test on any refusal.
func propose(t *testing.T, s *fake.MetaStore, evs ...meta.Event) {
	t.Helper()
	for _, ev := range evs {
		if a, err := s.Propose(context.Background(), meta.Envelope{AtMs: 1_700_000_000_000, Event: ev}); err != nil || !a.Result.OK() {
			t.Fatalf("%T: %+v, %v", ev, a, err)
		}
	}
}

// Ensure that a move whose source died before the destination ever
// reached it cannot be force-promoted: it waits as source_dead, then
// reports its worker blocked (source_dead_copy_behind) and never flips.
func TestForcePromoteNeedsAWholeCopy(t *testing.T) {
	t.Parallel()
	s, src, inst, _ := moveFixture(t, nil)
	propose(t, s, &meta.MemberJoin{ID: "n1", Addr: "127.0.0.1:1", ClusterAddr: "127.0.0.1:2"}, &meta.MemberDead{ID: "n1"})
	src.SetDown(true)
	clock := &settableClock{now: time.UnixMilli(1_700_000_000_000).Add(moves.ForcePromoteAfter + time.Second)}
	r := moves.NewRunner(moves.RunnerDeps{Store: s, Peers: src, Installer: inst, Clock: clock,
		Log: slog.New(slog.DiscardHandler), Self: "n2"})
	run(t, r)
	waitBlocked(t, r, "source_dead_copy_behind")
	if reps := r.Reports(); len(reps) != 1 || reps[0].Phase != "blocked" || reps[0].Blocked != "source_dead_copy_behind" {
		t.Fatalf("reports %+v", reps)
	}
	if row, _, _ := s.Assignment("t", 0); row.Owner != "n1" {
		t.Fatalf("flipped without a copy: %+v", row)
	}
}

// Ensure that a move whose topic was deleted while it copied never
// installs: the install would stamp the directory with a dead incarnation.
func TestNoInstallForADeletedTopic(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{}
	s, src, inst, r := moveFixture(t, obs)
	var once sync.Once
	src.OnFreeze = func(*fake.TransferSource) {
		once.Do(func() { commit(t, s, &meta.DeleteTopic{Name: "t"}) })
	}
	run(t, r)
	waitEnded(t, obs, 1)
	if _, ok := inst.Installed(ref0); ok || inst.Uninstalls() > 0 {
		t.Fatalf("a copy of a deleted topic was installed (still installed: %v)", ok)
	}
}

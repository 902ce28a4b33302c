package moves_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad/narad/adapters/fake"
	"github.com/narad/narad/application/leaderconfirm"
	"github.com/narad/narad/application/moves"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/meta"
	"github.com/narad/narad/ports"
)

// staleCopies is this node's disk in the sweep tests: one copy of t/0,
// listed as a source would list it, and the drops asked of it.
type staleCopies struct {
	mu      sync.Mutex
	copyOf  ports.TransferListing
	dropped []string
}

func (c *staleCopies) LocalPartitions() ([]domain.PartitionRef, error) {
	return []domain.PartitionRef{ref0}, nil
}

func (c *staleCopies) DropStaleCopy(ref domain.PartitionRef, reclaim bool, guard int64) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	verdict := "quarantine"
	if reclaim {
		verdict = "reclaim"
	}
	c.dropped = append(c.dropped, verdict)
	return reclaim && c.copyOf.HighWatermark <= guard, nil
}

func (c *staleCopies) StagedPartitions() ([]domain.PartitionRef, error) {
	return []domain.PartitionRef{{Topic: ref0.Topic, Partition: ref0.Partition}}, nil
}

func (c *staleCopies) TransferListing(domain.PartitionRef) (ports.TransferListing, error) {
	return c.copyOf, nil
}

func (c *staleCopies) ReadTransferChunk(domain.PartitionRef, string, int64, int) ([]byte, error) {
	return nil, nil
}

func (c *staleCopies) drops() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.dropped...)
}

// sweepFixture: t/0 moved from this node (n2) to n1, which now lists
// owner; n2 still holds local.
func sweepFixture(t *testing.T, owner *fake.TransferSource, local ports.TransferListing, target string) (*moves.Runner, *staleCopies, *fake.Installer) {
	t.Helper()
	s := fake.NewMetaStore()
	t.Cleanup(s.Close)
	commit(t, s,
		&meta.CreateTopic{Name: "t", ID: topicID, Partitions: 1, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: topicID, Partition: 0, Owner: "n1"})
	if target != "" {
		commit(t, s, &meta.SetAssignmentTarget{Topic: "t", TopicID: topicID, Partition: 0, Target: target})
	}
	disk := &staleCopies{copyOf: local}
	inst := fake.NewInstaller()
	if err := inst.StagingReset(ref0); err != nil { // left by a move that ended elsewhere
		t.Fatal(err)
	}
	r := moves.NewRunner(moves.RunnerDeps{Store: s, Peers: owner, Installer: inst,
		Clock: fixedClock(time.UnixMilli(1_700_000_000_000)), Log: slog.New(slog.DiscardHandler), Self: "n2",
		Sweep: moves.SweepDeps{Copies: disk, Local: disk, Confirm: leaderconfirm.New(s)}})
	return r, disk, inst
}

// sweepOnce ticks r to its first sweep and waits for it to end.
func sweepOnce(t *testing.T, r *moves.Runner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 30 {
		r.Tick(ctx)
	}
	r.Wait()
}

// Ensure that a former owner's stale-copy sweep (internals.md §11.6)
// reclaims a copy the new owner vouches for, sets aside one the owner
// does not (no move marker), leaves alone a partition moving back to it,
// and removes the staging of a move that ended elsewhere.
func TestStaleCopySweep(t *testing.T) {
	local := ports.TransferListing{HighWatermark: 302, Segments: []ports.TransferFile{{Name: "00000000000000000000.log", Size: 11}}}
	owner := fake.NewTransferSource()
	owner.Append("00000000000000000000.log", []byte("abcdefghijklmnop"), 310)

	r, disk, inst := sweepFixture(t, owner, local, "")
	sweepOnce(t, r)
	if got := disk.drops(); len(got) != 1 || got[0] != "quarantine" {
		t.Fatalf("an owner without a move marker: drops %v, want one quarantine", got)
	}
	if inst.Staged(ref0) {
		t.Fatal("the staging of a move that no longer targets this node was kept")
	}

	owner.SetMarker(&ports.MoveMarker{PromotedHighWatermark: 302})
	r, disk, _ = sweepFixture(t, owner, local, "")
	sweepOnce(t, r)
	if got := disk.drops(); len(got) != 1 || got[0] != "reclaim" {
		t.Fatalf("an owner vouching for the copy: drops %v, want one reclaim", got)
	}

	r, disk, _ = sweepFixture(t, owner, local, "n2")
	sweepOnce(t, r)
	if got := disk.drops(); len(got) != 0 {
		t.Fatalf("a partition moving back here was swept: %v", got)
	}
}

// listedCopies is a disk whose copies the sweep lists are counted, with
// no staging.
type listedCopies struct {
	staleCopies
	lists atomic.Int32
}

func (c *listedCopies) LocalPartitions() ([]domain.PartitionRef, error) {
	c.lists.Add(1)
	return c.staleCopies.LocalPartitions()
}

func (c *listedCopies) StagedPartitions() ([]domain.PartitionRef, error) { return nil, nil }

// Ensure that a sweep that found nothing to judge is not repeated while
// the assignments stand still, is repeated once they move, and still runs
// every SweepFullEverySweeps sweeps; a sweep that found a copy to judge is
// repeated at the next sweep tick.
func TestStaleCopySweepSkipsWhileNothingChanged(t *testing.T) {
	s := fake.NewMetaStore()
	t.Cleanup(s.Close)
	commit(t, s,
		&meta.CreateTopic{Name: "t", ID: topicID, Partitions: 1, VisibilityTimeoutMs: 30_000},
		&meta.AssignPartitionIfAbsent{Topic: "t", TopicID: topicID, Partition: 0, Owner: "n2"})
	disk := &listedCopies{}
	r := moves.NewRunner(moves.RunnerDeps{Store: s, Peers: fake.NewTransferSource(), Installer: fake.NewInstaller(),
		Clock: fixedClock(time.UnixMilli(1_700_000_000_000)), Log: slog.New(slog.DiscardHandler), Self: "n2",
		Sweep: moves.SweepDeps{Copies: disk, Local: disk, Confirm: leaderconfirm.New(s)}})
	sweeps := func(n int) int32 {
		for range n {
			sweepOnce(t, r)
		}
		return disk.lists.Load()
	}
	if got := sweeps(1); got != 1 {
		t.Fatalf("first sweep listed %d times", got)
	}
	if got := sweeps(2); got != 1 {
		t.Fatalf("sweeps with nothing changed listed again: %d listings", got)
	}
	commit(t, s, &meta.SetAssignmentTarget{Topic: "t", TopicID: topicID, Partition: 0, Target: "n3"})
	if got := sweeps(1); got != 2 {
		t.Fatalf("a sweep after the assignments moved: %d listings, want 2", got)
	}
	if got := sweeps(moves.SweepFullEverySweeps - 1); got != 2 {
		t.Fatalf("%d quiet sweeps listed: %d listings, want 2", moves.SweepFullEverySweeps-1, got)
	}
	if got := sweeps(1); got != 3 {
		t.Fatalf("the full sweep after %d skipped: %d listings, want 3", moves.SweepFullEverySweeps-1, got)
	}

	commit(t, s, &meta.CompleteMove{Topic: "t", TopicID: topicID, Partition: 0, ExpectedOwner: "n2", Target: "n3"})
	if got := sweeps(2); got != 5 {
		t.Fatalf("sweeps finding a copy placed elsewhere: %d listings, want 5 (each sweep judges it again)", got)
	}
}

package produce_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/application/produce"
)

// The env's clock starts at a busy boundary: 1,700,000,000 s is a multiple
// of produce.BusyLinger and of produce.BusyRemoteLinger.

// slowCommit is how long each commit takes in the busy tests: past
// produce.BusyLatencyMin, well inside one boundary.
const slowCommit = 5 * time.Millisecond

// busyEnv runs a dispatcher over a one-partition local topic t on a slow
// owner (a full window of slow commits measured) whose destination has
// just made its first commit (of one record), at the env's start time: it
// is busy until the next boundary.
func busyEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	e.committer.slow.Store(int64(slowCommit))
	e.measured = map[string]time.Duration{self: slowCommit}
	e.run(t)
	e.produce(t, "t", "", "first")
	waitFor(t, "the first commit", func() bool { return len(e.committer.snapshot()) == 1 })
	return e
}

// Ensure that a destination that has just committed holds its next, small
// batch until the next busy boundary, then sends it as one commit.
func TestBusyDestinationHoldsItsNextBatchUntilTheBoundary(t *testing.T) {
	t.Parallel()
	e := busyEnv(t)
	for _, p := range []string{"b", "c", "d"} {
		e.produce(t, "t", "", p)
	}
	e.step(t, produce.BusyLinger/2) // slowCommit + BusyLinger/2: before the boundary
	if n := len(e.committer.snapshot()); n != 1 {
		t.Fatalf("%d commits before the busy boundary, want 1", n)
	}
	e.step(t, produce.BusyLinger/2)
	waitFor(t, "the second commit", func() bool { return len(e.committer.snapshot()) == 2 })
	if got := len(e.committer.snapshot()[1].req.Records); got != 3 {
		t.Fatalf("the second commit carried %d records, want 3", got)
	}
}

// Ensure that an owner whose commits are fast (below
// produce.BusyLatencyMin) gets no busy linger: a light stream commits as
// it arrives, without the clock reaching a boundary.
func TestFastOwnerGetsNoBusyLinger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	e.committer.slow.Store(int64(produce.BusyLatencyMin / 2))
	e.measured = map[string]time.Duration{self: produce.BusyLatencyMin / 2}
	e.run(t)
	for i, p := range []string{"a", "b", "c", "d"} {
		e.produce(t, "t", "", p)
		waitFor(t, "the record's commit", func() bool { return e.wal.Checkpoint() == uint64(i+1) })
	}
	if got := e.clock.Now().Sub(time.Unix(1_700_000_000, 0)); got >= produce.BusyLinger {
		t.Fatalf("the clock reached %v: commits waited for a busy boundary", got)
	}
}

// Ensure that a destination that stayed quiet for a whole boundary commits
// its next record at once.
func TestQuietDestinationCommitsAtOnce(t *testing.T) {
	t.Parallel()
	e := busyEnv(t)
	e.step(t, produce.BusyLinger)
	e.produce(t, "t", "", "b") // the clock stays where it is from here on
	waitFor(t, "the second commit", func() bool { return len(e.committer.snapshot()) == 2 })
}

// Ensure that a busy destination that already holds a full commit (64
// records) sends it without waiting for the boundary.
func TestFullCommitDoesNotWaitForTheBoundary(t *testing.T) {
	t.Parallel()
	e := busyEnv(t)
	for i := range 64 {
		e.produce(t, "t", "", fmt.Sprintf("m%02d", i))
	}
	waitFor(t, "the full commit", func() bool { return len(e.committer.snapshot()) == 2 })
	if got := len(e.committer.snapshot()[1].req.Records); got != 64 {
		t.Fatalf("the full commit carried %d records, want 64", got)
	}
}

// Ensure that busy boundaries are multiples of the step on the wall clock,
// strictly after the launch, for the local and the remote step.
func TestBusyBoundariesAreOnTheWallClock(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	for _, step := range []time.Duration{produce.BusyLinger, produce.BusyRemoteLinger} {
		cases := []struct {
			launched, want time.Time
		}{
			{t0, t0.Add(step)},
			{t0.Add(time.Millisecond), t0.Add(step)},
			{t0.Add(step - time.Nanosecond), t0.Add(step)},
			{t0.Add(step), t0.Add(2 * step)},
		}
		for _, c := range cases {
			if got := produce.BusyUntil(c.launched, step); !got.Equal(c.want) {
				t.Errorf("BusyUntil(%v, %v) = %v, want %v", c.launched, step, got, c.want)
			}
		}
	}
}

// Ensure that a busy destination on a slow remote owner holds its next
// batch past the local boundary, until the remote one, then sends it as one
// commit.
func TestRemoteBusyDestinationHoldsUntilTheRemoteBoundary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", "n2")
	e.remote.slow.Store(int64(slowCommit))
	e.measured = map[string]time.Duration{"n2": slowCommit}
	e.run(t)
	e.produce(t, "t", "", "first")
	waitFor(t, "the first commit", func() bool { return len(e.peers.Commits()) == 1 })
	for _, p := range []string{"b", "c", "d"} {
		e.produce(t, "t", "", p)
	}
	e.step(t, produce.BusyLinger) // slowCommit + BusyLinger: past the local boundary only
	if n := len(e.peers.Commits()); n != 1 {
		t.Fatalf("%d remote commits before the remote boundary, want 1", n)
	}
	e.step(t, produce.BusyRemoteLinger-produce.BusyLinger)
	waitFor(t, "the second commit", func() bool { return len(e.peers.Commits()) == 2 })
	if got := len(e.peers.Commits()[1].Req.Records); got != 3 {
		t.Fatalf("the second remote commit carried %d records, want 3", got)
	}
}

// Ensure that a busy destination whose queue fills a commit's byte budget
// sends it without waiting for the boundary; only the short tail waits.
func TestByteFullCommitDoesNotWaitForTheBoundary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	e.committer.slow.Store(int64(slowCommit))
	e.measured = map[string]time.Duration{self: slowCommit}
	payload := bytes.Repeat([]byte("x"), 1<<20)
	for range 16 { // 7 fit in one 8 MiB commit: 7, 7, then a tail of 2
		e.produce(t, "t", "", string(payload))
	}
	e.run(t)
	waitFor(t, "two full commits", func() bool { return e.wal.Checkpoint() == 14 })
	e.step(t, produce.BusyLinger)
	waitFor(t, "the tail", func() bool { return e.wal.Checkpoint() == 16 })
}

// Ensure that an owner counts as busy only once its window holds more slow
// commits than a window with a quarter of fast ones could: never from its
// first window of commits (the dial, the handshake), never from a few
// slow commits however slow, and no longer once a quarter of its window is
// fast again; and that the window starts again at each rejudge boundary on
// the wall clock.
func TestOwnerIsBusyOnlyWhenFewOfItsCommitsAreFast(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0) // a rejudge boundary
	fast, slow := produce.BusyLatencyMin/2, produce.BusyLatencyMin
	w, quarter := produce.BusyWindow, produce.BusyWindow/4
	at := func(when time.Time, n int, took ...time.Duration) []produce.Sample {
		var out []produce.Sample
		for range n {
			for _, d := range took {
				out = append(out, produce.Sample{Took: d, At: when})
			}
		}
		return out
	}
	then := func(parts ...[]produce.Sample) []produce.Sample {
		var out []produce.Sample
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	warm := at(t0, w, fast) // the first window, not judged
	cases := []struct {
		name    string
		samples []produce.Sample
		want    bool
	}{
		{"no commits", nil, false},
		{"a first window of very slow commits", at(t0, w, 10*slow), false},
		{"a window at the threshold", then(warm, at(t0, w, slow)), true},
		{"a window of fast commits", then(warm, at(t0, w, fast)), false},
		{"fast, then a window of slow", then(warm, at(t0, w, fast), at(t0, w, slow)), true},
		{"cold first commits, then fast ones", then(at(t0, w, 30*time.Millisecond), at(t0, w, fast)), false},
		{"three quarters of a window, slow", then(warm, at(t0, w-quarter, slow)), false},
		{"three quarters of a window and one, slow", then(warm, at(t0, w-quarter+1, slow)), true},
		{"slow, then a quarter fast", then(warm, at(t0, w, slow), at(t0, quarter, fast)), false},
		{"slow, then a quarter less one fast", then(warm, at(t0, w, slow), at(t0, quarter-1, fast)), true},
		{"fast with spikes averaging above the threshold", then(warm, at(t0, w, 2*time.Millisecond, 2*time.Millisecond, 2*time.Millisecond, 12*time.Millisecond)), false},
		{"slow, then one slow in the next interval", then(warm, at(t0, w, slow), at(t0.Add(produce.BusyRejudge), 1, slow)), false},
		{"slow, then one slow just before the next interval", then(warm, at(t0, w, slow), at(t0.Add(produce.BusyRejudge-time.Nanosecond), 1, slow)), true},
		{"slow, then slow again in the next interval", then(warm, at(t0, w, slow), at(t0.Add(produce.BusyRejudge), w-quarter+1, slow)), true},
	}
	for _, c := range cases {
		if got := produce.BusyAfter(c.samples...); got != c.want {
			t.Errorf("%s: busy = %v, want %v", c.name, got, c.want)
		}
	}
}

// Ensure that slow first commits to an owner (a dial, a handshake) do not
// start the busy linger: each record of a light stream commits as it
// arrives, with the clock left where the commits leave it.
func TestColdFirstCommitsDoNotStartTheBusyLinger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.createTopic(t, "t", 1, 1)
	e.assign(t, "t", self)
	cold := produce.BusyLinger * 3 / 4 // ends before the first boundary
	e.committer.slow.Store(int64(cold))
	e.run(t)
	for i := range 2 * produce.BusyWindow {
		if i == 4 {
			e.committer.slow.Store(int64(produce.BusyLatencyMin / 4))
		}
		e.produce(t, "t", "", fmt.Sprintf("m%02d", i))
		waitFor(t, "the record's commit", func() bool { return e.wal.Checkpoint() == uint64(i+1) })
	}
}

// Ensure that a busy owner is measured afresh once the wall clock passes a
// rejudge boundary: a light stream's next record commits at once, without
// waiting for a busy boundary, until the new window shows the owner slow.
func TestBusyOwnerIsJudgedAgainAtTheNextInterval(t *testing.T) {
	t.Parallel()
	e := busyEnv(t)
	e.step(t, produce.BusyRejudge)
	for i, p := range []string{"b", "c", "d"} {
		e.produce(t, "t", "", p)
		waitFor(t, "the record's commit", func() bool { return len(e.committer.snapshot()) == i+2 })
	}
}

// Ensure that the dispatcher counts the owners it judges busy, one each,
// and stops counting one once a window shows it fast again.
func TestBusyOwnersCountsTheOwnersJudgedBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := e.dispatcher()
	fast, slow := produce.BusyLatencyMin/2, produce.BusyLatencyMin
	steps := []struct {
		owner string
		took  time.Duration
		want  int
	}{
		{"n2", slow, 1},
		{"n2", slow, 1},
		{self, fast, 1},
		{"n3", slow, 2},
		{"n2", fast, 1},
		{"n3", fast, 0},
	}
	for i, s := range steps {
		d.FillLatency(s.owner, s.took)
		if got := d.BusyOwners(); got != s.want {
			t.Fatalf("step %d (%s at %v): %d busy owners, want %d", i, s.owner, s.took, got, s.want)
		}
	}
}

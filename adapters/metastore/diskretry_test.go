package metastore

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/narad/narad/domain/meta"
)

// flakyDisk fails the first fails commits, then commits for real, on a
// virtual clock that the retry's sleeps advance.
type flakyDisk struct {
	fails  int
	tries  int
	sleeps []time.Duration
	clock  time.Time
}

var errDiskFull = errors.New("no space left on device")

func (f *flakyDisk) install(s *stateMachine) {
	f.clock = time.Unix(1_700_000_000, 0)
	s.disk.try = func(b *pebble.Batch) error {
		f.tries++
		if f.tries <= f.fails {
			return errDiskFull
		}
		return b.Commit(pebble.Sync)
	}
	s.disk.now = func() time.Time { return f.clock }
	s.disk.sleep = func(d time.Duration) {
		f.sleeps = append(f.sleeps, d)
		f.clock = f.clock.Add(d)
	}
}

func observedSM(t *testing.T, dir string) (*stateMachine, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	s := newStateMachine(newDBFiles(dir, testLogger()), zap.New(core), meta.JournalKeep, nil)
	if _, err := s.Open(nil); err != nil {
		t.Fatal(err)
	}
	return s, logs
}

// Ensure that a batch commit the disk refuses is retried after 100 ms,
// doubling, logged once, and that the retried batch holds the whole batch:
// its views and its applied index survive a restart (internals §8.3 (b)).
func TestDiskRefusalIsRetriedThenApplied(t *testing.T) {
	dir := t.TempDir()
	s, logs := observedSM(t, dir)
	disk := &flakyDisk{fails: 3}
	disk.install(s)
	if _, err := s.Update(entries(t, 1, createTopic("a", 1), createTopic("b", 2))); err != nil {
		t.Fatalf("Update after a disk that recovered: %v", err)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if len(disk.sleeps) != len(want) || disk.sleeps[0] != want[0] || disk.sleeps[1] != want[1] || disk.sleeps[2] != want[2] {
		t.Fatalf("waits %v, want %v", disk.sleeps, want)
	}
	if n := logs.FilterMessageSnippet("refused a write").Len(); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once", n)
	}
	if s.applied.Load() != 2 {
		t.Fatalf("applied %d, want 2", s.applied.Load())
	}
	s.Close()
	s = openSM(t, dir)
	defer s.Close()
	if d := describe(t, s); s.applied.Load() != 2 || !strings.Contains(d, "topic a ") || !strings.Contains(d, "topic b ") {
		t.Fatalf("after restart applied %d, views:\n%s", s.applied.Load(), d)
	}
}

// Ensure that a disk that keeps refusing is retried, backing off to 5 s,
// for 30 s, and then stops the replica with the fatal error: the entries
// are not counted applied and a restart meets them again.
func TestDiskRefusalFor30sStopsTheReplica(t *testing.T) {
	dir := t.TempDir()
	s, logs := observedSM(t, dir)
	if _, err := s.Update(entries(t, 1, createTopic("before", 1))); err != nil {
		t.Fatal(err)
	}
	disk := &flakyDisk{fails: 1 << 30}
	disk.install(s)
	_, err := s.Update(entries(t, 2, createTopic("lost", 2)))
	if !errors.Is(err, ErrEntryNotApplicable) || !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "index 2") {
		t.Fatalf("Update = %v, want ErrEntryNotApplicable naming index 2 and the disk error", err)
	}
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	// 100 ms doubling to 5 s; the last wait ends the 30 s exactly.
	if want := ms(100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000, 3700); !slices.Equal(disk.sleeps, want) {
		t.Fatalf("waits %v, want %v", disk.sleeps, want)
	}
	if disk.tries != 12 {
		t.Fatalf("%d commits tried, want 12 (one, then one after each wait)", disk.tries)
	}
	if n := logs.FilterMessageSnippet("refused a write").Len(); n != 1 {
		t.Fatalf("the refusal was logged %d times, want once", n)
	}
	if n := logs.FilterMessageSnippet("cannot be applied").Len(); n != 1 {
		t.Fatalf("the stop was logged %d times, want once", n)
	}
	if s.applied.Load() != 1 {
		t.Fatalf("applied %d after the refused batch, want 1", s.applied.Load())
	}
	s.Close()
	s = openSM(t, dir)
	defer s.Close()
	if s.applied.Load() != 1 || strings.Contains(describe(t, s), "lost") {
		t.Fatalf("the refused batch reached the disk: applied %d", s.applied.Load())
	}
}

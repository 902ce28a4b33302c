package segmentlog

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// mutations records the filesystem operations that change something, and
// opens of segment files, while armed.
type mutations struct {
	mu    sync.Mutex
	armed bool
	seen  []string
}

func (m *mutations) hook(op vfs.Op, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.armed {
		return nil
	}
	switch op {
	case vfs.OpCreate, vfs.OpWrite, vfs.OpSync, vfs.OpTruncate, vfs.OpRename, vfs.OpRemove, vfs.OpMkdir, vfs.OpSyncDir:
		m.seen = append(m.seen, name)
	}
	return nil
}

func (m *mutations) arm(on bool) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed = on
	seen := m.seen
	m.seen = nil
	return seen
}

func mustStats(t *testing.T, s *Store, ref domain.PartitionRef) ports.LogStats {
	t.Helper()
	st, err := s.LogStats(ref)
	if err != nil {
		t.Fatalf("LogStats(%v): %v", ref, err)
	}
	return st
}

// diskStats counts ref's segment files and their bytes as the filesystem
// sees them.
func diskStats(t *testing.T, fsys vfs.FS, ref domain.PartitionRef) (segments int, size int64) {
	t.Helper()
	names, err := fsys.List(partDir(ref))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.HasSuffix(n, segmentExt) {
			continue
		}
		info, err := fsys.Stat(partDir(ref) + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		segments++
		size += info.Size()
	}
	return segments, size
}

// commitSegments writes 12 batches into a store with 2 KiB segments, one
// second of the fake clock apart, and returns the record count.
func commitSegments(t *testing.T, s *Store, clock *fakeClock, ref domain.PartitionRef) int64 {
	t.Helper()
	total := int64(0)
	for i := range 12 {
		total += int64(len(batch(i, 8)))
		mustCommit(t, s, ref, batch(i, 8))
		clock.Advance(time.Second)
	}
	return total
}

// ensure that an open log's statistics come from memory and match the
// files on disk: several segments, their bytes, the offsets, the last write
// of the oldest segment; appended records count in NextOffset before any
// commit makes them visible (api.md §2.4 "next_offset may briefly lead").
func TestLogStatsOpenLog(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	opts := testOptions(mem, clock)
	opts.SegmentMaxBytes = 2 << 10
	s := mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	start := clock.Now()
	total := commitSegments(t, s, clock, ref)
	st := mustStats(t, s, ref)
	segments, size := diskStats(t, mem, ref)
	if segments < 3 || st.Segments != segments || st.SizeBytes != size {
		t.Fatalf("LogStats = %+v; disk holds %d segments, %d bytes (want at least 3 segments)", st, segments, size)
	}
	if st.OldestOffset != 0 || st.NextOffset != total || st.HighWatermark != total {
		t.Fatalf("LogStats = %+v, want offsets [0, %d)", st, total)
	}
	if st.OldestSegmentAt.Before(start) || !st.OldestSegmentAt.Before(clock.Now().Add(-time.Second)) {
		t.Fatalf("oldest segment at %v, want a commit time of the first segment, after %v and before the last commit",
			st.OldestSegmentAt, start)
	}
	first, err := s.Append(context.Background(), ref, batch(99, 3))
	if err != nil || first != total {
		t.Fatalf("Append at %d, %v; want %d", first, err, total)
	}
	st = mustStats(t, s, ref)
	if st.NextOffset != total+3 || (st.HighWatermark != total && st.HighWatermark != total+3) {
		t.Fatalf("after Append: %+v, want next %d and the high watermark at %d or %d", st, total+3, total, total+3)
	}
	if err := s.Sync(ref); err != nil {
		t.Fatal(err)
	}
	if st = mustStats(t, s, ref); st.NextOffset != total+3 || st.HighWatermark != total+3 {
		t.Fatalf("after Sync: %+v, want next and high watermark %d", st, total+3)
	}
}

// ensure that LogStats is a peek: it does not keep a log open past its idle
// period (spec 4.12: describes peek without stamping).
func TestLogStatsDoesNotStampUse(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	mustCommit(t, s, ref, batch(1, 2))
	clock.Advance(2 * time.Minute)
	if st := mustStats(t, s, ref); st.HighWatermark != 2 {
		t.Fatalf("LogStats = %+v", st)
	}
	s.evictOnce()
	if s.slotFor(ref).log.Load() != nil {
		t.Fatal("a log only described was kept open")
	}
}

// ensure that a closed log is described from its directory and hwm file
// with the numbers it had open, opening and writing nothing (spec 4.6).
func TestLogStatsClosedLogOpensNothing(t *testing.T) {
	mem, clock, rec := vfs.NewMem(), newFakeClock(), &mutations{}
	opts := evictOptions(mem, clock)
	opts.FS, opts.SegmentMaxBytes = vfs.Inject(mem, rec.hook), 2<<10
	s := mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	ref := testRef(1)
	commitSegments(t, s, clock, ref)
	open := mustStats(t, s, ref)
	clock.Advance(2 * time.Minute)
	s.evictOnce()
	if s.Stats().OpenLogs != 0 {
		t.Fatal("the log was not evicted")
	}
	rec.arm(true)
	closed := mustStats(t, s, ref)
	if seen := rec.arm(false); len(seen) != 0 {
		t.Fatalf("LogStats of a closed log changed the filesystem: %v", seen)
	}
	if s.Stats().OpenLogs != 0 || s.slotFor(ref).log.Load() != nil {
		t.Fatal("LogStats opened the log")
	}
	at := closed.OldestSegmentAt
	closed.OldestSegmentAt = open.OldestSegmentAt
	if closed != open {
		t.Fatalf("closed LogStats = %+v, open %+v", closed, open)
	}
	if at.IsZero() { // the file's mtime (MemFS stamps the wall clock)
		t.Fatal("closed log reports no oldest segment time")
	}
}

// ensure that a closed log whose hwm file holds no boundary (a crash while
// open) is described from a read-only scan of its active segment: every
// committed record counted, nothing written, nothing opened, and the same
// numbers the next open settles on.
func TestLogStatsAfterCrashScansReadOnly(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	opts := testOptions(mem, clock)
	opts.SegmentMaxBytes = 2 << 10
	s := mustOpen(t, opts)
	ref := testRef(2)
	total := commitSegments(t, s, clock, ref)
	crashed := mem.Crash(vfs.CrashOptions{})
	_ = s.Close()
	if b, err := vfs.ReadFile(crashed, partDir(ref)+"/"+hwmFileName); err == nil && len(b) == hwmFileBytes {
		t.Fatalf("the crash left a boundary in the hwm file: %x", b)
	}
	rec := &mutations{}
	opts.FS = vfs.Inject(crashed, rec.hook)
	s = mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	rec.arm(true)
	st := mustStats(t, s, ref)
	if seen := rec.arm(false); len(seen) != 0 || s.Stats().OpenLogs != 0 {
		t.Fatalf("LogStats after a crash changed %v or opened a log (%d open)", seen, s.Stats().OpenLogs)
	}
	segments, size := diskStats(t, crashed, ref)
	if st.HighWatermark != total || st.NextOffset != total || st.OldestOffset != 0 || st.Segments != segments || st.SizeBytes != size {
		t.Fatalf("LogStats after a crash = %+v, want [0, %d) over %d segments, %d bytes", st, total, segments, size)
	}
	if got := hwmBounds(t, s, ref); got != total {
		t.Fatalf("the open settled on %d, LogStats said %d", got, total)
	}
}

// ensure that a partition never opened reports zeros and gets no directory.
func TestLogStatsNeverOpened(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, testOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(7)
	if st := mustStats(t, s, ref); st != (ports.LogStats{}) {
		t.Fatalf("LogStats = %+v, want zero", st)
	}
	if _, err := mem.Stat(partDir(ref)); err == nil {
		t.Fatal("LogStats created the partition directory")
	}
}

// ensure that LogStats racing commits and evictions (under -race) never
// sees the high watermark go back, whichever path answers.
func TestLogStatsRacesCommitsAndEviction(t *testing.T) {
	mem, clock := vfs.NewMem(), newFakeClock()
	s := mustOpen(t, evictOptions(mem, clock))
	defer func() { _ = s.Close() }()
	ref := testRef(3)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(stop)
		for i := range 40 {
			if _, err := s.CommitDurable(context.Background(), ref, batch(i, 2)); err != nil {
				t.Errorf("CommitDurable: %v", err)
				return
			}
			clock.Advance(2 * time.Minute)
			s.evictOnce()
		}
	})
	wg.Go(func() {
		last := int64(0)
		for {
			select {
			case <-stop:
				return
			default:
			}
			st, err := s.LogStats(ref)
			if err != nil {
				t.Errorf("LogStats: %v", err)
				return
			}
			if st.HighWatermark < last || st.NextOffset < st.HighWatermark {
				t.Errorf("LogStats %+v after a high watermark of %d", st, last)
				return
			}
			last = st.HighWatermark
		}
	})
	wg.Wait()
	if st := mustStats(t, s, ref); st.HighWatermark != 80 {
		t.Fatalf("final LogStats = %+v, want 80 records", st)
	}
}

// ensure that PeekCommittedAt reads an open log's record time without stamping use, and answers nothing for a closed log.
func TestPeekCommittedAtNeverStampsUse(t *testing.T) {
	clock := time.Unix(1_800_000_000, 0)
	opts := DefaultOptions(vfs.NewMem(), "/data")
	opts.Now = func() time.Time { return clock }
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ref := domain.PartitionRef{Topic: "t", TopicID: "00000000000000aa", Partition: 0}
	if _, err := s.CommitDurable(context.Background(), ref, []domain.Record{{Payload: []byte("x"), CommittedAtMs: 1_800_000_000_123}}); err != nil {
		t.Fatal(err)
	}
	if at, ok := s.PeekCommittedAt(ref, 0); !ok || at != 1_800_000_000_123 {
		t.Fatalf("peek %d %v", at, ok)
	}
	if _, ok := s.PeekCommittedAt(ref, 1); ok {
		t.Fatal("peek past the high watermark answered")
	}
	clock = clock.Add(opts.IdleEviction + time.Minute)
	s.PeekCommittedAt(ref, 0)
	s.evictOnce()
	if s.Stats().OpenLogs != 0 {
		t.Fatal("a peek kept the log from idle eviction")
	}
	if _, ok := s.PeekCommittedAt(ref, 0); ok {
		t.Fatal("a peek answered for a closed log")
	}
}

// fsOps counts every filesystem operation while armed.
type fsOps struct {
	mu    sync.Mutex
	armed bool
	n     int
}

func (c *fsOps) hook(vfs.Op, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed {
		c.n++
	}
	return nil
}

func (c *fsOps) arm(on bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.armed, c.n = on, 0
	return n
}

// ensure that a closed log's stats are read from its directory once and
// then served without touching the filesystem (every scrape asks for every
// owned partition), and that a reopen, a commit and the next close, or a
// removal, make the next answer fresh.
func TestLogStatsOfAClosedLogAreCachedUntilItChanges(t *testing.T) {
	mem, clock, ops := vfs.NewMem(), newFakeClock(), &fsOps{}
	opts := evictOptions(mem, clock)
	opts.FS = vfs.Inject(mem, ops.hook)
	s := mustOpen(t, opts)
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	mustCommit(t, s, ref, batch(1, 2))
	clock.Advance(2 * time.Minute)
	s.evictOnce()
	if first := mustStats(t, s, ref); first.HighWatermark != 2 {
		t.Fatalf("closed LogStats = %+v", first)
	}
	ops.arm(true)
	for range 3 {
		if st := mustStats(t, s, ref); st.HighWatermark != 2 {
			t.Fatalf("cached LogStats = %+v", st)
		}
	}
	if n := ops.arm(false); n != 0 {
		t.Fatalf("three stats of an unchanged closed log made %d filesystem calls, want 0", n)
	}
	mustCommit(t, s, ref, batch(2, 3)) // reopens, commits
	clock.Advance(2 * time.Minute)
	s.evictOnce()
	if st := mustStats(t, s, ref); st.HighWatermark != 5 {
		t.Fatalf("after a reopen, a commit and a close: %+v, want hwm 5", st)
	}
	if err := s.Remove(ref); err != nil {
		t.Fatal(err)
	}
	if st := mustStats(t, s, ref); st.HighWatermark != 0 || st.Segments != 0 {
		t.Fatalf("after Remove: %+v, want nothing", st)
	}
}

package porttest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// plStats returns ref's LogStats, failing t on an error.
func plStats(t *testing.T, pl ports.PartitionLogs, ref domain.PartitionRef) ports.LogStats {
	t.Helper()
	st, err := pl.LogStats(ref)
	if err != nil {
		t.Fatalf("LogStats(%v): %v", ref, err)
	}
	return st
}

// ensure that LogStats reports zeros for a partition never opened, the same
// offsets as Bounds once written, a size that grows with every commit, a
// known oldest-segment time, and refuses bad refs, retired incarnations and
// a closed store like the other calls (api.md §2.4 partition statistics).
func plLogStats(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("stats", plID1, 1)
	if st := plStats(t, pl, plRef("stats", plID1, 4)); st != (ports.LogStats{}) {
		t.Fatalf("LogStats of a partition never opened = %+v, want zero", st)
	}
	plCommit(t, pl, ref, plRecords(30, 10))
	plCommit(t, pl, ref, plRecords(31, 5))
	st := plStats(t, pl, ref)
	if st.OldestOffset != 0 || st.NextOffset != 15 || st.HighWatermark != 15 {
		t.Fatalf("LogStats after 15 records = %+v, want offsets [0, 15) and next 15", st)
	}
	if b, err := pl.Bounds(ref); err != nil || b != (ports.LogBounds{Oldest: st.OldestOffset, HighWatermark: st.HighWatermark}) {
		t.Fatalf("Bounds = %+v, %v; disagrees with LogStats %+v", b, err, st)
	}
	if st.Segments < 1 || st.SizeBytes <= 0 || st.OldestSegmentAt.IsZero() {
		t.Fatalf("LogStats of a written partition = %+v, want segments, bytes and an oldest-segment time", st)
	}
	plCommit(t, pl, ref, plRecords(32, 3))
	if more := plStats(t, pl, ref); more.SizeBytes <= st.SizeBytes || more.NextOffset != 18 || more.HighWatermark != 18 {
		t.Fatalf("LogStats after 3 more records = %+v, was %+v: want more bytes and offsets to 18", more, st)
	}
	for _, bad := range []domain.PartitionRef{plRef("a/b", "", 0), plRef("ok", "", -1), plRef("ok", "NOTHEX0123456789", 0)} {
		_, err := pl.LogStats(bad)
		plWantErr(t, err, domain.ErrInvalidRecord, fmt.Sprintf("LogStats of %q/%d id %q", bad.Topic, bad.Partition, bad.TopicID))
	}
	plCommit(t, pl, plRef("stats", plID2, 0), plRecords(33, 1))
	_, err := pl.LogStats(ref)
	plWantErr(t, err, domain.ErrLogClosed, "LogStats with the retired id")
	if st := plStats(t, pl, plRef("stats", plID2, 1)); st.HighWatermark != 0 || st.SizeBytes != 0 {
		t.Fatalf("LogStats of the new incarnation's unwritten partition = %+v, want empty", st)
	}
	if err := pl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err = pl.LogStats(plRef("stats", plID2, 0)); !errors.Is(err, domain.ErrClosed) && !errors.Is(err, domain.ErrLogClosed) {
		t.Fatalf("LogStats after Close: %v, want a closed error", err)
	}
}

// ensure that a restart reports the same statistics, answered before
// anything reopens the partition.
func plLogStatsReopen(t *testing.T, pl ports.PartitionLogs, reopen func(*testing.T, ports.PartitionLogs) ports.PartitionLogs) {
	ref := plRef("stats-durable", plID1, 2)
	plCommit(t, pl, ref, plRecords(34, 12))
	plCommit(t, pl, ref, plRecords(35, 4))
	before := plStats(t, pl, ref)
	pl = reopen(t, pl)
	t.Cleanup(func() { _ = pl.Close() })
	after := plStats(t, pl, ref)
	at := after.OldestSegmentAt
	after.OldestSegmentAt = before.OldestSegmentAt
	if after != before {
		t.Fatalf("LogStats after reopen = %+v, before %+v", after, before)
	}
	if d := at.Sub(before.OldestSegmentAt); at.IsZero() || d < -time.Minute || d > time.Minute {
		t.Fatalf("oldest segment time after reopen %v, before %v", at, before.OldestSegmentAt)
	}
}

package porttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad/narad/domain"
	"github.com/narad/narad/ports"
)

// PartitionLogsFeatures says what the adapter under test supports beyond
// the port.
type PartitionLogsFeatures struct {
	// Reopen closes pl and returns a PartitionLogs over the same storage, as a
	// process restart would. Nil skips the restart checks.
	Reopen func(t *testing.T, pl ports.PartitionLogs) ports.PartitionLogs
	// AgeOut moves pl's clock forward by d and runs its retention once. Nil
	// skips the retention checks.
	AgeOut func(t *testing.T, pl ports.PartitionLogs, d time.Duration)
}

// plWait bounds every wait of the suite.
const plWait = 10 * time.Second

// PartitionLogs runs the ports.PartitionLogs conformance suite. open returns
// a PartitionLogs on fresh storage; the suite closes it.
func PartitionLogs(t *testing.T, open func(t *testing.T) ports.PartitionLogs, features ...PartitionLogsFeatures) {
	var feat PartitionLogsFeatures
	if len(features) > 0 {
		feat = features[0]
	}
	cases := []struct {
		name string
		run  func(t *testing.T, pl ports.PartitionLogs)
	}{
		{"commit_and_read_back_byte_identical", plReadBack},
		{"offsets_dense_across_commits", plDenseOffsets},
		{"read_limits", plReadLimits},
		{"read_boundaries", plReadBoundaries},
		{"caller_keeps_its_slices", plSliceOwnership},
		{"commit_time_never_decreases", plCommitTimeFloor},
		{"changed_fires_on_commit", plChanged},
		{"on_change_hears_every_change", plOnChange},
		{"new_incarnation_never_shows_old_records", plIncarnation},
		{"remove_deletes_the_partition", plRemove},
		{"concurrent_commits_and_readers", plConcurrent},
		{"invalid_input_is_refused", plInvalid},
		{"closed_logs_refuse", plClosed},
		{"log_stats_peek", plLogStats},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pl := open(t)
			t.Cleanup(func() { _ = pl.Close() })
			c.run(t, pl)
		})
	}
	if feat.Reopen != nil {
		t.Run("reopen_keeps_everything", func(t *testing.T) {
			t.Parallel()
			plReopen(t, open(t), feat.Reopen)
		})
	}
	if feat.Reopen != nil {
		t.Run("log_stats_survive_reopen", func(t *testing.T) {
			t.Parallel()
			plLogStatsReopen(t, open(t), feat.Reopen)
		})
	}
	if feat.AgeOut != nil {
		t.Run("retention_ages_records_out", func(t *testing.T) {
			t.Parallel()
			pl := open(t)
			t.Cleanup(func() { _ = pl.Close() })
			plRetention(t, pl, feat.AgeOut)
		})
	}
}

func plRef(topic string, id domain.TopicID, partition int32) domain.PartitionRef {
	return domain.PartitionRef{Topic: topic, TopicID: id, Partition: partition}
}

const (
	plID1 domain.TopicID = "00112233445566aa"
	plID2 domain.TopicID = "ffeeddccbbaa9988"
)

// plRecords returns n varied records: keyed and keyless, binary payloads of
// different sizes with every byte value.
func plRecords(seed, n int) []domain.Record {
	recs := make([]domain.Record, n)
	for i := range recs {
		k := seed*1000 + i
		p := make([]byte, 1+(k*53)%700)
		for j := range p {
			p[j] = byte(k*7 + j)
		}
		recs[i] = domain.Record{Payload: p, CommittedAtMs: 1_700_000_000_000 + int64(k)}
		if k%3 != 0 {
			recs[i].Key = []byte(fmt.Sprintf("key-%d\x00\xff", k))
		}
	}
	return recs
}

func plCommit(t *testing.T, pl ports.PartitionLogs, ref domain.PartitionRef, recs []domain.Record) int64 {
	t.Helper()
	first, err := pl.CommitDurable(context.Background(), ref, recs)
	if err != nil {
		t.Fatalf("CommitDurable(%v): %v", ref, err)
	}
	return first
}

func plRead(t *testing.T, pl ports.PartitionLogs, ref domain.PartitionRef, from int64, n int) []domain.Record {
	t.Helper()
	got, err := pl.Read(context.Background(), ref, from, n, 0)
	if err != nil {
		t.Fatalf("Read(%v, %d): %v", ref, from, err)
	}
	return got
}

// plCheck fails t unless got holds want's keys and payloads at offsets
// first, first+1, ...
func plCheck(t *testing.T, got []domain.Record, first int64, want []domain.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Offset != first+int64(i) {
			t.Fatalf("record %d has offset %d, want %d", i, r.Offset, first+int64(i))
		}
		if !bytes.Equal(r.Key, want[i].Key) || !bytes.Equal(r.Payload, want[i].Payload) {
			t.Fatalf("offset %d: key %q payload %d bytes, want key %q payload %d bytes (or different bytes)",
				r.Offset, r.Key, len(r.Payload), want[i].Key, len(want[i].Payload))
		}
	}
}

func plWantErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// ensure that committed records read back byte-identical, keys (empty ones
// included) and payloads, with their commit times, from offset 0.
func plReadBack(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("readback", plID1, 0)
	recs := plRecords(1, 40)
	recs = append(recs, domain.Record{Key: []byte{}, Payload: []byte{0}, CommittedAtMs: 1_800_000_000_000})
	if first := plCommit(t, pl, ref, recs); first != 0 {
		t.Fatalf("first commit at %d, want 0", first)
	}
	got := plRead(t, pl, ref, 0, len(recs)+10)
	plCheck(t, got, 0, recs)
	for i, r := range got {
		if r.CommittedAtMs < recs[i].CommittedAtMs {
			t.Fatalf("offset %d committed at %d, below the proposed %d", i, r.CommittedAtMs, recs[i].CommittedAtMs)
		}
	}
	plCheck(t, plRead(t, pl, ref, 17, 5), 17, recs[17:22])
}

// ensure that offsets are dense from 0 per partition across commits and that
// partitions and topics do not share offsets.
func plDenseOffsets(t *testing.T, pl ports.PartitionLogs) {
	a, b := plRef("dense", plID1, 0), plRef("dense", plID1, 3)
	c := plRef("dense-other", "", 0)
	var all []domain.Record
	for i := range 6 {
		recs := plRecords(i, 1+i*3)
		if first := plCommit(t, pl, a, recs); first != int64(len(all)) {
			t.Fatalf("commit %d at %d, want %d", i, first, len(all))
		}
		all = append(all, recs...)
	}
	if first := plCommit(t, pl, b, plRecords(9, 2)); first != 0 {
		t.Fatalf("other partition's first commit at %d, want 0", first)
	}
	if first := plCommit(t, pl, c, plRecords(9, 2)); first != 0 {
		t.Fatalf("other topic's first commit at %d, want 0", first)
	}
	plCheck(t, plRead(t, pl, a, 0, len(all)), 0, all)
	bounds, err := pl.Bounds(a)
	if err != nil || bounds != (ports.LogBounds{Oldest: 0, HighWatermark: int64(len(all))}) {
		t.Fatalf("Bounds = %+v, %v; want [0, %d)", bounds, err, len(all))
	}
}

// ensure that maxRecords and maxBytes bound a read, which still returns at
// least one record.
func plReadLimits(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("limits", plID1, 1)
	recs := make([]domain.Record, 20)
	for i := range recs {
		recs[i] = domain.Record{Payload: bytes.Repeat([]byte{byte(i)}, 100)}
	}
	plCommit(t, pl, ref, recs[:7])
	plCommit(t, pl, ref, recs[7:])
	got, err := pl.Read(context.Background(), ref, 2, 5, 0)
	if err != nil || len(got) != 5 {
		t.Fatalf("maxRecords 5: %d records, %v", len(got), err)
	}
	plCheck(t, got, 2, recs[2:7])
	got, err = pl.Read(context.Background(), ref, 0, 100, 350)
	if err != nil || len(got) != 3 {
		t.Fatalf("maxBytes 350 over 100-byte payloads: %d records, %v; want 3", len(got), err)
	}
	got, err = pl.Read(context.Background(), ref, 4, 100, 10)
	if err != nil || len(got) != 1 || got[0].Offset != 4 {
		t.Fatalf("maxBytes below one record: %d records, %v; want exactly offset 4", len(got), err)
	}
	got, err = pl.Read(context.Background(), ref, 15, 100, 0)
	if err != nil {
		t.Fatalf("read to the end: %v", err)
	}
	plCheck(t, got, 15, recs[15:])
}

// ensure that every read boundary answers its sentinel: negative, at and past
// the high watermark, and an empty partition.
func plReadBoundaries(t *testing.T, pl ports.PartitionLogs) {
	ctx := context.Background()
	ref := plRef("bounds", plID1, 0)
	_, err := pl.Read(ctx, ref, 0, 1, 0)
	plWantErr(t, err, domain.ErrOffsetNotWritten, "read of an empty partition")
	if b, err := pl.Bounds(plRef("bounds", plID1, 5)); err != nil || b != (ports.LogBounds{}) {
		t.Fatalf("Bounds of an unwritten partition = %+v, %v; want zero", b, err)
	}
	plCommit(t, pl, ref, plRecords(2, 4))
	_, err = pl.Read(ctx, ref, -1, 1, 0)
	plWantErr(t, err, domain.ErrOffsetNegative, "read at -1")
	_, err = pl.Read(ctx, ref, 4, 1, 0)
	plWantErr(t, err, domain.ErrOffsetNotWritten, "read at the high watermark")
	_, err = pl.Read(ctx, ref, 1000, 1, 0)
	plWantErr(t, err, domain.ErrOffsetNotWritten, "read past the high watermark")
	if got := plRead(t, pl, ref, 3, 10); len(got) != 1 || got[0].Offset != 3 {
		t.Fatalf("read of the last record: %+v", got)
	}
}

// ensure that the store copies what it is given: changing the caller's
// slices after a commit changes nothing stored.
func plSliceOwnership(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("owned", plID1, 0)
	recs := plRecords(3, 3)
	want := make([]domain.Record, len(recs))
	for i, r := range recs {
		want[i] = domain.Record{Key: bytes.Clone(r.Key), Payload: bytes.Clone(r.Payload)}
	}
	plCommit(t, pl, ref, recs)
	for _, r := range recs {
		clear(r.Payload)
		clear(r.Key)
	}
	plCheck(t, plRead(t, pl, ref, 0, 10), 0, want)
}

// ensure that commit times never decrease along a partition (a lower
// proposal is raised to the floor) and a zero proposal is stamped.
func plCommitTimeFloor(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("floor", plID1, 2)
	plCommit(t, pl, ref, []domain.Record{{Payload: []byte("a"), CommittedAtMs: 5_000_000}})
	plCommit(t, pl, ref, []domain.Record{
		{Payload: []byte("b"), CommittedAtMs: 1_000},
		{Payload: []byte("c"), CommittedAtMs: 9_000_000},
		{Payload: []byte("d"), CommittedAtMs: 2_000},
	})
	plCommit(t, pl, ref, []domain.Record{{Payload: []byte("e")}})
	got := plRead(t, pl, ref, 0, 10)
	want := []int64{5_000_000, 5_000_000, 9_000_000, 9_000_000}
	for i, w := range want {
		if got[i].CommittedAtMs != w {
			t.Fatalf("offset %d committed at %d, want %d", i, got[i].CommittedAtMs, w)
		}
	}
	if got[4].CommittedAtMs < 9_000_000 {
		t.Fatalf("stamped commit time %d went below the floor", got[4].CommittedAtMs)
	}
}

// ensure that Changed's channel closes at the next commit of its partition.
func plChanged(t *testing.T, pl ports.PartitionLogs) {
	ref := plRef("changed", plID1, 0)
	ch, err := pl.Changed(ref)
	if err != nil {
		t.Fatalf("Changed: %v", err)
	}
	plCommit(t, pl, ref, plRecords(4, 2))
	plWaitClosed(t, ch, "Changed after a commit")
	ch, err = pl.Changed(ref)
	if err != nil {
		t.Fatalf("Changed: %v", err)
	}
	select {
	case <-ch:
		// A spurious wake-up is allowed; a missed one is not.
	default:
	}
	plCommit(t, pl, ref, plRecords(5, 1))
	plWaitClosed(t, ch, "Changed after a second commit")
}

func plWaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(plWait):
		t.Fatalf("%s: not closed within %v", what, plWait)
	}
}

// ensure that a new incarnation under the same name starts empty and never
// shows the old incarnation's records, and that the old id is refused as a
// closed log rather than answered from the successor (F21, F35).
func plIncarnation(t *testing.T, pl ports.PartitionLogs) {
	ctx := context.Background()
	old, live := plRef("reborn", plID1, 0), plRef("reborn", plID2, 0)
	plCommit(t, pl, old, plRecords(6, 5))
	plCommit(t, pl, plRef("reborn", plID1, 1), plRecords(7, 2))
	_, err := pl.Read(ctx, live, 0, 10, 0)
	plWantErr(t, err, domain.ErrOffsetNotWritten, "read of the new incarnation before any commit")
	recs := plRecords(8, 3)
	if first := plCommit(t, pl, live, recs); first != 0 {
		t.Fatalf("new incarnation's first commit at %d, want 0", first)
	}
	plCheck(t, plRead(t, pl, live, 0, 100), 0, recs)
	if b, err := pl.Bounds(plRef("reborn", plID2, 1)); err != nil || b.HighWatermark != 0 {
		t.Fatalf("Bounds of the new incarnation's other partition = %+v, %v; want empty", b, err)
	}
	got, err := pl.Read(ctx, old, 0, 100, 0)
	if err == nil {
		t.Fatalf("read with the retired id served %d records", len(got))
	}
	plWantErr(t, err, domain.ErrLogClosed, "read with the retired id")
	if _, err := pl.CommitDurable(ctx, old, plRecords(9, 1)); err == nil {
		t.Fatal("commit with the retired id succeeded")
	}
	plCheck(t, plRead(t, pl, live, 0, 100), 0, recs)
}

// ensure that Remove empties the partition, leaves its neighbours alone and
// lets offsets start again at 0.
func plRemove(t *testing.T, pl ports.PartitionLogs) {
	ctx := context.Background()
	ref, other := plRef("removed", plID1, 0), plRef("removed", plID1, 1)
	plCommit(t, pl, ref, plRecords(10, 4))
	keep := plRecords(11, 2)
	plCommit(t, pl, other, keep)
	if err := pl.Remove(ref); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if b, err := pl.Bounds(ref); err != nil || b != (ports.LogBounds{}) {
		t.Fatalf("Bounds after Remove = %+v, %v; want zero", b, err)
	}
	_, err := pl.Read(ctx, ref, 0, 1, 0)
	plWantErr(t, err, domain.ErrOffsetNotWritten, "read after Remove")
	recs := plRecords(12, 1)
	if first := plCommit(t, pl, ref, recs); first != 0 {
		t.Fatalf("commit after Remove at %d, want 0", first)
	}
	plCheck(t, plRead(t, pl, ref, 0, 10), 0, recs)
	plCheck(t, plRead(t, pl, other, 0, 10), 0, keep)
}

// ensure that commits to different partitions and readers of them run
// concurrently (under -race) and leave dense, byte-identical logs.
func plConcurrent(t *testing.T, pl ports.PartitionLogs) {
	const partitions, commits = 4, 15
	want := make([][]domain.Record, partitions)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for p := range partitions {
		ref := plRef("busy", plID1, int32(p))
		wg.Go(func() {
			for c := range commits {
				recs := plRecords(p*100+c, 1+c%4)
				first, err := pl.CommitDurable(context.Background(), ref, recs)
				if err != nil || first != int64(len(want[p])) {
					t.Errorf("partition %d commit %d: at %d, %v; want %d", p, c, first, err, len(want[p]))
					return
				}
				want[p] = append(want[p], recs...)
			}
		})
	}
	var readers sync.WaitGroup
	for p := range partitions {
		ref := plRef("busy", plID1, int32(p))
		readers.Go(func() { plReadUntilStopped(t, pl, ref, stop) })
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	for p := range partitions {
		plCheck(t, plRead(t, pl, plRef("busy", plID1, int32(p)), 0, 1000), 0, want[p])
	}
}

func plReadUntilStopped(t *testing.T, pl ports.PartitionLogs, ref domain.PartitionRef, stop <-chan struct{}) {
	next := int64(0)
	for {
		select {
		case <-stop:
			return
		default:
		}
		ch, err := pl.Changed(ref)
		if err != nil {
			t.Errorf("Changed: %v", err)
			return
		}
		got, err := pl.Read(context.Background(), ref, next, 50, 0)
		switch {
		case errors.Is(err, domain.ErrOffsetNotWritten):
			select {
			case <-ch:
			case <-stop:
				return
			}
		case err != nil:
			t.Errorf("Read(%v, %d): %v", ref, next, err)
			return
		default:
			if got[0].Offset != next {
				t.Errorf("read from %d started at %d", next, got[0].Offset)
				return
			}
			next += int64(len(got))
		}
	}
}

// ensure that bad names, partitions, ids and batches are refused with
// domain.ErrInvalidRecord and store nothing.
func plInvalid(t *testing.T, pl ports.PartitionLogs) {
	ctx := context.Background()
	recs := plRecords(13, 1)
	long := string(bytes.Repeat([]byte("a"), 256))
	for _, ref := range []domain.PartitionRef{
		plRef("", "", 0), plRef(".", "", 0), plRef("..", "", 0), plRef("a/b", "", 0),
		plRef("a b", "", 0), plRef(long, "", 0), plRef("ok", "", -1), plRef("ok", "NOTHEX0123456789", 0),
	} {
		_, err := pl.CommitDurable(ctx, ref, recs)
		plWantErr(t, err, domain.ErrInvalidRecord, fmt.Sprintf("commit to %q/%d id %q", ref.Topic, ref.Partition, ref.TopicID))
		_, err = pl.Read(ctx, ref, 0, 1, 0)
		plWantErr(t, err, domain.ErrInvalidRecord, fmt.Sprintf("read of %q", ref.Topic))
	}
	ref := plRef("ok", plID1, 0)
	_, err := pl.CommitDurable(ctx, ref, nil)
	plWantErr(t, err, domain.ErrInvalidRecord, "empty batch")
	_, err = pl.CommitDurable(ctx, ref, []domain.Record{{Payload: []byte("x"), CommittedAtMs: -5}})
	plWantErr(t, err, domain.ErrInvalidRecord, "negative commit time")
	if b, err := pl.Bounds(ref); err != nil || b.HighWatermark != 0 {
		t.Fatalf("refused commits stored something: %+v, %v", b, err)
	}
	name := string(bytes.Repeat([]byte("a"), 255))
	plCommit(t, pl, plRef(name, "", 0), recs) // the longest valid name
}

// ensure that after Close commits fail with domain.ErrClosed and reads with
// a closed-log error, never a boundary answer.
func plClosed(t *testing.T, pl ports.PartitionLogs) {
	ctx := context.Background()
	ref := plRef("closing", plID1, 0)
	plCommit(t, pl, ref, plRecords(14, 2))
	if err := pl.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err := pl.CommitDurable(ctx, ref, plRecords(15, 1))
	plWantErr(t, err, domain.ErrClosed, "commit after Close")
	_, err = pl.Read(ctx, ref, 0, 1, 0)
	if !errors.Is(err, domain.ErrClosed) && !errors.Is(err, domain.ErrLogClosed) {
		t.Fatalf("read after Close: %v, want a closed error", err)
	}
}

// ensure that a restart keeps every committed record, the bounds and the
// offsets the next commit gets.
func plReopen(t *testing.T, pl ports.PartitionLogs, reopen func(*testing.T, ports.PartitionLogs) ports.PartitionLogs) {
	a, b := plRef("durable", plID1, 0), plRef("durable", plID1, 7)
	recsA := append(plRecords(16, 10), plRecords(17, 5)...)
	plCommit(t, pl, a, recsA[:10])
	plCommit(t, pl, a, recsA[10:])
	recsB := plRecords(18, 3)
	plCommit(t, pl, b, recsB)
	pl = reopen(t, pl)
	t.Cleanup(func() { _ = pl.Close() })
	if bounds, err := pl.Bounds(a); err != nil || bounds.HighWatermark != int64(len(recsA)) {
		t.Fatalf("Bounds after reopen = %+v, %v; want high watermark %d", bounds, err, len(recsA))
	}
	plCheck(t, plRead(t, pl, a, 0, 100), 0, recsA)
	plCheck(t, plRead(t, pl, b, 0, 100), 0, recsB)
	more := plRecords(19, 2)
	if first := plCommit(t, pl, a, more); first != int64(len(recsA)) {
		t.Fatalf("commit after reopen at %d, want %d", first, len(recsA))
	}
	pl = reopen(t, pl)
	t.Cleanup(func() { _ = pl.Close() })
	plCheck(t, plRead(t, pl, a, 0, 100), 0, append(recsA, more...))
}

// ensure that records older than the retention become gone (never served)
// while offsets keep counting from the high watermark.
func plRetention(t *testing.T, pl ports.PartitionLogs, ageOut func(*testing.T, ports.PartitionLogs, time.Duration)) {
	ctx := context.Background()
	ref := plRef("aging", plID1, 0)
	pl.SetRetention(ref.Topic, ref.TopicID, time.Hour)
	plCommit(t, pl, ref, plRecords(20, 5))
	ageOut(t, pl, 3*time.Hour)
	_, err := pl.Read(ctx, ref, 0, 10, 0)
	plWantErr(t, err, domain.ErrOffsetGone, "read of expired records")
	if b, err := pl.Bounds(ref); err != nil || b != (ports.LogBounds{Oldest: 5, HighWatermark: 5}) {
		t.Fatalf("Bounds after expiry = %+v, %v; want [5, 5)", b, err)
	}
	recs := plRecords(21, 2)
	if first := plCommit(t, pl, ref, recs); first != 5 {
		t.Fatalf("commit after expiry at %d, want 5", first)
	}
	plCheck(t, plRead(t, pl, ref, 5, 10), 5, recs)
	pl.SetRetention(ref.Topic, ref.TopicID, 0)
	ageOut(t, pl, 100*time.Hour)
	plCheck(t, plRead(t, pl, ref, 5, 10), 5, recs)
}

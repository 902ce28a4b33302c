package segmentlog

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad/narad/adapters/schedulefile"
	"github.com/narad/narad/adapters/vfs"
	"github.com/narad/narad/domain"
	"github.com/narad/narad/domain/schedule"
	"github.com/narad/narad/ports"
)

// scheduled returns n records due at base+step*i, tagged with seed.
func scheduled(seed, n int, base, step int64) []domain.Record {
	recs := make([]domain.Record, n)
	for i := range recs {
		recs[i] = domain.Record{Key: []byte(fmt.Sprintf("k%d", i%3)), Payload: []byte(fmt.Sprintf("s%d-%d", seed, i)), DeliverAtMs: base + step*int64(i)}
	}
	return recs
}

func mustSchedule(t *testing.T, s *Store, ref domain.PartitionRef, recs []domain.Record) {
	t.Helper()
	if err := s.Schedule(context.Background(), ref, recs); err != nil {
		t.Fatalf("Schedule: %v", err)
	}
}

func mustRelease(t *testing.T, s *Store, ref domain.PartitionRef, nowMs int64) ports.Released {
	t.Helper()
	out, err := s.Release(context.Background(), ref, nowMs, 1000)
	if err != nil {
		t.Fatalf("Release at %d: %v", nowMs, err)
	}
	return out
}

// logPayloads reads every committed payload of ref.
func logPayloads(t *testing.T, s *Store, ref domain.PartitionRef) []string {
	t.Helper()
	recs, err := s.Read(context.Background(), ref, 0, 1<<20, 1<<30)
	if err != nil {
		return nil
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Payload)
	}
	return out
}

func listing(t *testing.T, s *Store) map[int32]ports.ScheduledPartition {
	t.Helper()
	list, err := s.Scheduled()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]ports.ScheduledPartition{}
	for _, p := range list {
		out[p.Ref.Partition] = p
	}
	return out
}

// Ensure that scheduled records stay out of the log until their deliver-at,
// come out earliest first, are listed with their count and next release,
// and that a bucket whose window has passed is deleted (issue 19).
func TestScheduleReleasesOnlyWhatIsDue(t *testing.T) {
	fsys := vfs.NewMem()
	s := mustOpen(t, testOptions(fsys, newFakeClock()))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	const base = 1_800_000_000_000 // a bucket start
	mustSchedule(t, s, ref, []domain.Record{
		{Payload: []byte("c"), DeliverAtMs: base + 70_000},
		{Payload: []byte("b"), DeliverAtMs: base + 2_000},
		{Payload: []byte("a"), DeliverAtMs: base + 1_000},
	})
	if p := listing(t, s)[0]; p.Count != 3 || p.NextMs != base || p.Ref != ref {
		t.Fatalf("listed %+v", p)
	}
	if out := mustRelease(t, s, ref, base+999); out.Count != 0 || len(logPayloads(t, s, ref)) != 0 {
		t.Fatalf("released %+v before any was due", out)
	}
	if p := listing(t, s)[0]; p.NextMs != base+1_000 {
		t.Fatalf("after loading the bucket the next release is %d", p.NextMs)
	}
	out := mustRelease(t, s, ref, base+2_500)
	if out.Count != 2 || fmt.Sprint(out.LagMs) != "[1500 500]" || fmt.Sprint(logPayloads(t, s, ref)) != "[a b]" {
		t.Fatalf("released %+v, log %v", out, logPayloads(t, s, ref))
	}
	// The loaded bucket takes more (its file was the append handle before
	// it was loaded: one handle writes it from then on).
	mustSchedule(t, s, ref, []domain.Record{{Payload: []byte("b2"), DeliverAtMs: base + 3_000}})
	if out := mustRelease(t, s, ref, base+3_000); out.Count != 1 || fmt.Sprint(logPayloads(t, s, ref)) != "[a b b2]" {
		t.Fatalf("released %+v, log %v", out, logPayloads(t, s, ref))
	}
	bucket := filepath.Join(partDir(ref), schedulefile.Name(base))
	if _, err := fsys.Stat(bucket); err != nil {
		t.Fatal("the bucket went before its window ended")
	}
	mustRelease(t, s, ref, base+schedule.BucketWidthMs)
	if _, err := fsys.Stat(bucket); err == nil {
		t.Fatal("a finished bucket was kept")
	}
	if out := mustRelease(t, s, ref, base+70_000); out.Count != 1 || fmt.Sprint(logPayloads(t, s, ref)) != "[a b b2 c]" {
		t.Fatalf("second bucket released %+v", out)
	}
	mustRelease(t, s, ref, base+2*schedule.BucketWidthMs)
	if l := listing(t, s); len(l) != 0 {
		t.Fatalf("an empty schedule is listed: %+v", l)
	}
}

// Ensure that a restart finds the schedule on disk and that records
// released before it are not released again.
func TestScheduleSurvivesRestart(t *testing.T) {
	fsys := vfs.NewMem()
	clock := newFakeClock()
	s := mustOpen(t, testOptions(fsys, clock))
	ref := testRef(2)
	const base = 1_800_000_000_000
	mustSchedule(t, s, ref, scheduled(1, 10, base+100, 1_000))
	mustSchedule(t, s, ref, scheduled(2, 5, base+3*schedule.BucketWidthMs, 1))
	if out := mustRelease(t, s, ref, base+4_100); out.Count != 5 {
		t.Fatalf("released %d", out.Count)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, testOptions(fsys, clock))
	defer func() { _ = s.Close() }()
	if p := listing(t, s)[2]; p.Count != 10 || p.NextMs != base {
		t.Fatalf("after the restart the listing is %+v", p)
	}
	if out := mustRelease(t, s, ref, base+3*schedule.BucketWidthMs+10); out.Count != 10 {
		t.Fatalf("after the restart %d were released, want the 10 left", out.Count)
	}
	if got := logPayloads(t, s, ref); len(got) != 15 || got[5] != "s1-5" || got[14] != "s2-4" {
		t.Fatalf("log after the restart: %v", got)
	}
}

// Ensure that every acknowledged Schedule survives a machine crash.
func TestScheduleSurvivesMachineCrash(t *testing.T) {
	fsys := vfs.NewMem()
	clock := newFakeClock()
	s := mustOpen(t, testOptions(fsys, clock))
	ref := testRef(1)
	const base = 1_800_000_000_000
	for i := range 5 {
		mustSchedule(t, s, ref, scheduled(i, 7, base+int64(i)*30_000, 11))
	}
	crashed := fsys.Crash(vfs.CrashOptions{})
	_ = s.Close()
	s = mustOpen(t, testOptions(crashed, clock))
	defer func() { _ = s.Close() }()
	if p := listing(t, s)[1]; p.Count != 35 {
		t.Fatalf("after the crash %d are scheduled, want 35", p.Count)
	}
	for at := int64(base); at <= base+4*schedule.BucketWidthMs; at += 10_000 {
		mustRelease(t, s, ref, at)
	}
	if got := logPayloads(t, s, ref); len(got) != 35 {
		t.Fatalf("released %d after the crash, want 35", len(got))
	}
}

// Ensure that a move's freeze refuses both writing and releasing, that the
// bucket files move with the partition, and that the new owner lists and
// releases them.
func TestScheduleFreezesAndMovesWithThePartition(t *testing.T) {
	srcFS, dstFS := vfs.NewMem(), vfs.NewMem()
	src := mustOpen(t, testOptions(srcFS, newFakeClock()))
	defer func() { _ = src.Close() }()
	dst := mustOpen(t, testOptions(dstFS, newFakeClock()))
	defer func() { _ = dst.Close() }()
	ref := testRef(3)
	const base = 1_800_000_000_000
	mustCommit(t, src, ref, batch(1, 2))
	mustSchedule(t, src, ref, scheduled(1, 4, base+10, 40_000))
	if _, _, err := src.Freeze(ref, "", time.Minute); err != nil {
		t.Fatal(err)
	}
	wantErr(t, src.Schedule(context.Background(), ref, scheduled(9, 1, base, 1)), domain.ErrUnavailable, "schedule while frozen")
	_, err := src.Release(context.Background(), ref, base+1_000_000, 10)
	wantErr(t, err, domain.ErrUnavailable, "release while frozen")
	l, err := src.TransferListing(ref)
	if err != nil {
		t.Fatal(err)
	}
	buckets := 0
	for _, f := range l.Side {
		if isBucketName(f.Name) {
			buckets++
		}
	}
	if buckets != 3 {
		t.Fatalf("%d bucket files listed, want 3: %+v", buckets, l.Side)
	}
	hwm := stageCopy(t, src, dst, ref, 1<<20)
	if err := dst.Install(ref, ports.MoveMarker{PromotedHighWatermark: hwm}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-dst.ScheduleChanged():
	default:
		if p := listing(t, dst)[3]; p.Count != 4 {
			t.Fatalf("the destination lists %+v", p)
		}
	}
	if p := listing(t, dst)[3]; p.Count != 4 || p.Ref.TopicID != testID {
		t.Fatalf("the destination lists %+v", p)
	}
	for at := int64(base); at <= base+3*schedule.BucketWidthMs; at += 10_000 {
		if _, err := dst.Release(context.Background(), ref, at, 10); err != nil {
			t.Fatal(err)
		}
	}
	if got := logPayloads(t, dst, ref); len(got) != 6 || got[2] != "s1-0" || got[5] != "s1-3" {
		t.Fatalf("the destination's log: %v", got)
	}
}

// Ensure that a schedule change that moves the next release earlier wakes
// whoever waits on ScheduleChanged, and a later one does not.
func TestScheduleChangedWakesOnEarlier(t *testing.T) {
	s := mustOpen(t, testOptions(vfs.NewMem(), newFakeClock()))
	defer func() { _ = s.Close() }()
	ref := testRef(0)
	const base = 1_800_000_000_000
	ch := s.ScheduleChanged()
	mustSchedule(t, s, ref, scheduled(1, 1, base+5*schedule.BucketWidthMs, 1))
	select {
	case <-ch:
	default:
		t.Fatal("a first schedule did not wake the release loop")
	}
	ch = s.ScheduleChanged()
	mustSchedule(t, s, ref, scheduled(2, 1, base+9*schedule.BucketWidthMs, 1))
	select {
	case <-ch:
		t.Fatal("a later schedule woke the release loop")
	default:
	}
	mustSchedule(t, s, ref, scheduled(3, 1, base, 1))
	select {
	case <-ch:
	default:
		t.Fatal("an earlier schedule did not wake the release loop")
	}
}
